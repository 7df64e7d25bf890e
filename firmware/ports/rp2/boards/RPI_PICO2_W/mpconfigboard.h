// The port's RPI_PICO2_W as it is (the cribboard build only adds frozen modules).
#include "boards/RPI_PICO2_W/mpconfigboard.h"
