// The port's RPI_PICO_W as it is (the cribboard build only adds frozen modules).
#include "boards/RPI_PICO_W/mpconfigboard.h"
