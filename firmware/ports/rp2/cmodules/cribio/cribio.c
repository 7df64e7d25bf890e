// cribio: the board's serial input read without waiting, a line at a time, for the firmware's
// USB link (cribfw/usblink.py). MicroPython's sys.stdin reads a byte per call and blocks until
// every byte asked for has come, so the app had to poll and read one byte at a time: measured on
// the emulated RP2040, about 5,700 cycles a byte, the largest share of a short request's time.
// This reads what has arrived, in one call, from the same place sys.stdin reads it.
//
//   cribio.read_ready(buf, start) -> count
//     Copies the bytes stdin has ready into buf[start:], stopping after a newline (one line at
//     most, so the caller handles a line before the next is read) or when buf is full. Never
//     waits; 0 when nothing is ready. A Ctrl-C never reaches the buffer: the USB driver turns it
//     into KeyboardInterrupt as it arrives, as for sys.stdin, and this raises it before taking
//     any byte that came after it.
//
//   cribio.write(buf, n) -> count
//     Writes buf[:n] to the board's serial output as sys.stdout.buffer.write(buf, n) does, and
//     runs the USB driver's task before and after it. The driver's interrupt only schedules its
//     task, and native code runs no scheduled work: a line written while the last transfer is
//     done but not yet noted, or the rest of a line longer than a packet (a `! st` event takes
//     two), would wait in the driver until the next bytecode, wait or read of stdin (a whole
//     request's time in a burst of requests; the frame's drawing after a peg's event).
//
//   cribio.Flag() -> a flag: set() (from an interrupt handler too), clear(), is_set()
//     What asyncio.ThreadSafeFlag is, for a task to wait on (cribfw/irqflag.py), polled in C:
//     asyncio's wait polls each registered object whenever the core wakes (every USB frame, once
//     a millisecond, and before each request is read), and ThreadSafeFlag's poll is a Python
//     method, about 2,500 cycles a time on an RP2040: a request's reply came that much later.
//
//   tud_cdc_rx_cb (TinyUSB's callback for USB serial input, not a Python function)
//     Moves what the USB driver received into stdin's ring a packet at a time. MicroPython's
//     own callback (renamed micropython_tud_cdc_rx_cb by the images' cribboard.h) takes one byte
//     per driver call, about 640 cycles a byte on an RP2040; it still runs after this one, for
//     what did not fit in the ring (it marks the interface, and MicroPython's poll calls again).

#include "py/runtime.h"
#include "py/mphal.h"
#include "py/stream.h"
#include "py/ringbuf.h"
#include "py/mperrno.h"
#include "extmod/misc.h"

// (Not in the build's scan for MicroPython's names, NO_QSTR, which has no TinyUSB headers.)
#if MICROPY_HW_USB_CDC && MICROPY_HW_ENABLE_USBDEV && !defined(NO_QSTR)
#define CRIBIO_USB (1)
#include "tusb.h"
#include "mp_usbd.h"
#include "mp_usbd_cdc.h"

void tud_cdc_rx_cb(uint8_t itf) {
    uint8_t packet[64];
    for (;;) {
        uint32_t room = MIN(ringbuf_free(&stdin_ringbuf), sizeof(packet));
        uint32_t n = MIN(room, tud_cdc_n_available(itf));
        if (n == 0) {
            break;
        }
        n = tud_cdc_n_read(itf, packet, n);
        if (n == 0) {
            break;
        }
        uint32_t start = 0;  // the packet from here on goes into the ring, in one copy
        #if MICROPY_KBD_EXCEPTION
        for (uint32_t i = 0; i < n; ++i) {
            if (packet[i] == mp_interrupt_char) {
                // As MicroPython's callback: the ring emptied (with what came before), the
                // KeyboardInterrupt scheduled.
                stdin_ringbuf.iget = stdin_ringbuf.iput = 0;
                mp_sched_keyboard_interrupt();
                start = i + 1;
            }
        }
        #endif
        ringbuf_put_bytes(&stdin_ringbuf, packet + start, n - start);  // (n fits: room above)
    }
    // MicroPython's own: clears the interface's pending mark, or sets it when bytes are left
    // and the ring is full (its poll calls this again once there is room).
    micropython_tud_cdc_rx_cb(itf);
}
#endif

// `buf_in`'s buffer (for `flags`' access) and a position in it, 0 to its length, from
// `at_in`; ValueError outside it.
static void get_buffer_at(mp_obj_t buf_in, mp_obj_t at_in, mp_uint_t flags,
    mp_buffer_info_t *bufinfo, mp_int_t *at) {
    mp_get_buffer_raise(buf_in, bufinfo, flags);
    *at = mp_obj_get_int(at_in);
    if (*at < 0 || (size_t)*at > bufinfo->len) {
        mp_raise_ValueError(MP_ERROR_TEXT("position outside the buffer"));
    }
}

static mp_obj_t cribio_read_ready(mp_obj_t buf_in, mp_obj_t start_in) {
    mp_buffer_info_t bufinfo;
    mp_int_t start;
    get_buffer_at(buf_in, start_in, MP_BUFFER_WRITE, &bufinfo, &start);
    uint8_t *buf = bufinfo.buf;
    size_t end = bufinfo.len;
    size_t n = start;
    // Polling moves what the USB driver holds into stdin's ring (as sys.stdin's read does).
    mp_hal_stdio_poll(MP_STREAM_POLL_RD);
    #if MICROPY_KBD_EXCEPTION
    // A Ctrl-C that came (its KeyboardInterrupt pending) stops the app here, before a byte after
    // it is taken: those are for the REPL that comes next (mpremote sends Ctrl-A right behind
    // its Ctrl-C, and the USB packet may hold both). Bytecode checks this between any two
    // instructions; the app's reading path is native code and C, which do not.
    if (MP_STATE_THREAD(mp_pending_exception) != MP_OBJ_NULL) {
        mp_handle_pending(true);
    }
    #endif
    while (n < end) {
        int c = ringbuf_get(&stdin_ringbuf);
        #if MICROPY_PY_OS_DUPTERM
        if (c < 0) {
            c = mp_os_dupterm_rx_chr();  // (-1 at once when no other terminal has a byte)
        }
        #endif
        if (c < 0) {
            if ((mp_int_t)n == start) {
                break;  // nothing after the poll above: nothing is waiting (the usual end)
            }
            // The ring may have been full with more waiting in the driver: take that too.
            mp_hal_stdio_poll(MP_STREAM_POLL_RD);
            c = ringbuf_get(&stdin_ringbuf);
            if (c < 0) {
                break;
            }
        }
        buf[n++] = c;
        if (c == '\n') {
            break;
        }
    }
    return MP_OBJ_NEW_SMALL_INT(n - start);
}
static MP_DEFINE_CONST_FUN_OBJ_2(cribio_read_ready_obj, cribio_read_ready);

static mp_obj_t cribio_write(mp_obj_t buf_in, mp_obj_t n_in) {
    mp_buffer_info_t bufinfo;
    mp_int_t n;
    get_buffer_at(buf_in, n_in, MP_BUFFER_READ, &bufinfo, &n);
    #ifdef CRIBIO_USB
    mp_usbd_task();
    #endif
    mp_uint_t written = mp_hal_stdout_tx_strn(bufinfo.buf, n);
    #ifdef CRIBIO_USB
    mp_usbd_task();
    #endif
    return MP_OBJ_NEW_SMALL_INT(written);
}
static MP_DEFINE_CONST_FUN_OBJ_2(cribio_write_obj, cribio_write);

typedef struct _cribio_flag_obj_t {
    mp_obj_base_t base;
    volatile uint8_t state;  // (set by an interrupt handler)
} cribio_flag_obj_t;

static mp_obj_t cribio_flag_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw,
    const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 0, 0, false);
    cribio_flag_obj_t *self = mp_obj_malloc(cribio_flag_obj_t, type);
    self->state = 0;
    return MP_OBJ_FROM_PTR(self);
}

static mp_obj_t cribio_flag_set(mp_obj_t self_in) {
    ((cribio_flag_obj_t *)MP_OBJ_TO_PTR(self_in))->state = 1;
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(cribio_flag_set_obj, cribio_flag_set);

static mp_obj_t cribio_flag_clear(mp_obj_t self_in) {
    ((cribio_flag_obj_t *)MP_OBJ_TO_PTR(self_in))->state = 0;
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(cribio_flag_clear_obj, cribio_flag_clear);

static mp_obj_t cribio_flag_is_set(mp_obj_t self_in) {
    return mp_obj_new_bool(((cribio_flag_obj_t *)MP_OBJ_TO_PTR(self_in))->state);
}
static MP_DEFINE_CONST_FUN_OBJ_1(cribio_flag_is_set_obj, cribio_flag_is_set);

// select.poll's question: readable while set (as ThreadSafeFlag.ioctl answers).
static mp_uint_t cribio_flag_ioctl(mp_obj_t self_in, mp_uint_t request, uintptr_t arg,
    int *errcode) {
    cribio_flag_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (request == MP_STREAM_POLL) {
        return self->state ? (arg & MP_STREAM_POLL_RD) : 0;
    }
    *errcode = MP_EINVAL;
    return MP_STREAM_ERROR;
}

static const mp_stream_p_t cribio_flag_stream_p = {
    .ioctl = cribio_flag_ioctl,
};

static const mp_rom_map_elem_t cribio_flag_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_set), MP_ROM_PTR(&cribio_flag_set_obj) },
    { MP_ROM_QSTR(MP_QSTR_clear), MP_ROM_PTR(&cribio_flag_clear_obj) },
    { MP_ROM_QSTR(MP_QSTR_is_set), MP_ROM_PTR(&cribio_flag_is_set_obj) },
};
static MP_DEFINE_CONST_DICT(cribio_flag_locals, cribio_flag_locals_table);

static MP_DEFINE_CONST_OBJ_TYPE(
    cribio_type_flag,
    MP_QSTR_Flag,
    MP_TYPE_FLAG_NONE,
    make_new, cribio_flag_make_new,
    protocol, &cribio_flag_stream_p,
    locals_dict, &cribio_flag_locals
    );

static const mp_rom_map_elem_t cribio_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_cribio) },
    { MP_ROM_QSTR(MP_QSTR_read_ready), MP_ROM_PTR(&cribio_read_ready_obj) },
    { MP_ROM_QSTR(MP_QSTR_write), MP_ROM_PTR(&cribio_write_obj) },
    { MP_ROM_QSTR(MP_QSTR_Flag), MP_ROM_PTR(&cribio_type_flag) },
};
static MP_DEFINE_CONST_DICT(cribio_globals, cribio_globals_table);

const mp_obj_module_t cribio_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&cribio_globals,
};

MP_REGISTER_MODULE(MP_QSTR_cribio, cribio_module);
