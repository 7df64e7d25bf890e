# The cribboard build of MicroPython's RPI_PICO2_W: the port's board as it is (its cmake, header and
# pins), with the firmware frozen in through this folder's manifest.py. Built as an out-of-tree
# board: make -C ports/rp2 BOARD_DIR=<this folder> (firmware/ports/rp2/build.py does).
include(${MICROPY_PORT_DIR}/boards/RPI_PICO2_W/mpconfigboard.cmake)
set(MICROPY_BOARD_PINS ${MICROPY_PORT_DIR}/boards/RPI_PICO2_W/pins.csv)
set(MICROPY_FROZEN_MANIFEST ${MICROPY_BOARD_DIR}/manifest.py)
include(${MICROPY_BOARD_DIR}/../cribboard.cmake)
# The port's default variant (Arm cores), which this board folder does not have of its own.
include(${MICROPY_PORT_DIR}/boards/RPI_PICO2_W/mpconfigvariant.cmake)
