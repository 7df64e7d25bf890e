// The port's RPI_PICO, with what every cribboard image changes (../cribboard.h); the build adds
// the frozen firmware.
#include "boards/RPI_PICO/mpconfigboard.h"
#include "../cribboard.h"
