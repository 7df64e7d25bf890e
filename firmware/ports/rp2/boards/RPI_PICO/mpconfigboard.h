// The port's RPI_PICO as it is (the cribboard build only adds frozen modules).
#include "boards/RPI_PICO/mpconfigboard.h"
