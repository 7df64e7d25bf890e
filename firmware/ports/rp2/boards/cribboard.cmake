# What every cribboard image adds to MicroPython's build, on every board (each board's
# mpconfigboard.cmake includes this): the C module cribio (../cmodules/cribio/cribio.c), the
# serial input read a line at a time without waiting.
set(USER_C_MODULES ${CMAKE_CURRENT_LIST_DIR}/../cmodules/cribio/micropython.cmake)
