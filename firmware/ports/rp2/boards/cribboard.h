// What the cribboard images change in MicroPython's configuration, on every board (each board's
// mpconfigboard.h includes the port's own board header, then this).
//
// Python frames on a stack of their own (MicroPython's pystack). Without it a call whose frame
// (locals and value stack) is larger than 11 words, which is most of the firmware's functions,
// takes the frame from the heap and frees it on return: measured on the emulated RP2040, about
// 11,000 cycles more per call than a small frame's, twice that once the heap is fragmented. With
// it every frame is a pointer bump. 1536 words (6 KB, taken from the heap's RAM) hold the
// firmware's deepest calls many times over; a frame that does not fit raises RuntimeError.
#define MICROPY_ENABLE_PYSTACK (1)
#define CRIBBOARD_PYSTACK_WORDS (1536)

// Set up once at power-on, and emptied at each soft reset (before the next run's mp_init).
#define MICROPY_BOARD_EARLY_INIT() \
    do { \
        static mp_obj_t cribboard_pystack[CRIBBOARD_PYSTACK_WORDS]; \
        mp_pystack_init(cribboard_pystack, cribboard_pystack + CRIBBOARD_PYSTACK_WORDS); \
    } while (0)
#define MICROPY_BOARD_END_SOFT_RESET() \
    mp_pystack_init(MP_STATE_THREAD(pystack_start), MP_STATE_THREAD(pystack_end))

// The USB serial input taken from the driver a packet at a time (cribio's tud_cdc_rx_cb,
// cmodules/cribio/cribio.c): MicroPython's own callback, which moves one byte per driver call
// (about 640 cycles a byte on an RP2040: 9,000 for a peg's line, 165,000 for a burst of 20),
// keeps this name and is called after it for what is left (a full ring, the mark it keeps).
#define MICROPY_WRAP_TUD_CDC_RX_CB(name) micropython_##name
