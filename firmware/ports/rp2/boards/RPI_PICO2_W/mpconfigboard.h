// The port's RPI_PICO2_W, with what every cribboard image changes (../cribboard.h); the build adds
// the frozen firmware.
#include "boards/RPI_PICO2_W/mpconfigboard.h"
#include "../cribboard.h"
