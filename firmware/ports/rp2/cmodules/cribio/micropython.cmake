# cribio, a C module of the cribboard images (see cribio.c): USER_C_MODULES names this file
# (firmware/ports/rp2/boards/cribboard.cmake).
add_library(usermod_cribio INTERFACE)
target_sources(usermod_cribio INTERFACE ${CMAKE_CURRENT_LIST_DIR}/cribio.c)
target_include_directories(usermod_cribio INTERFACE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(usermod INTERFACE usermod_cribio)
