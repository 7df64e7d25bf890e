# Frozen into the cribboard rp2 images as `_boot.py`, in place of the port's own: MicroPython
# runs it first at every start (and soft reset), before boot.py and main.py. It starts the boot
# guard (cribboot.py: the chip's watchdog runs through the boot, a watchdog scratch register
# counts the boots that crashed or hung), then lays out the storage region (cribboot.lay_out: the
# game's and the admitted devices' rings at its end, littlefs on the rest, mounted at "/";
# formatted when it holds none, a fresh board, or when it crashed the board twice in a row).
import machine
import rp2

import cribboot


def _boot():
    import sys

    # The WATCHDOG block (RP2040 datasheet 4.7, RP2350 12.9): CTRL at 0, SCRATCH0..7 from 0x0C.
    # SCRATCH4..7 belong to the SDK and the boot ROM (watchdog_reboot), SCRATCH0..1 to
    # machine.bootloader(); SCRATCH2 is free.
    base = 0x400D8000 if "RP2350" in sys.implementation._machine else 0x40058000
    scratch2 = base + 0x14
    ctrl_clear = base + 0x3000  # the atomic bit-clear alias of CTRL
    enable = 1 << 30  # CTRL.ENABLE

    class Scratch:
        def get(self):
            return machine.mem32[scratch2] & 0xFFFFFFFF

        def set(self, value):
            machine.mem32[scratch2] = value

    class Watchdog:
        def arm(self, ms):
            machine.WDT(timeout=ms)  # the SDK's watchdog_enable; MicroPython cannot stop it:
            # disarm() can

        def disarm(self):
            machine.mem32[ctrl_clear] = enable

    boot = cribboot.current = cribboot.Boot(Scratch(), Watchdog())
    # The boot came up once Python is in control outside the file system's mount: the app says
    # so itself (App.run); at the REPL (no app, a Ctrl-C) this soft timer's callback does. It
    # runs only when MicroPython handles events: between bytecodes, at the REPL, and also inside
    # the flash driver's reads (rp2.Flash.readblocks handles events), so it stands the guard down
    # only once no mount is in progress: a mount that hangs in littlefs is still caught.
    mounting = [True]

    def up(timer):
        if not mounting[0]:
            timer.deinit()
            cribboot.up()

    machine.Timer(mode=machine.Timer.PERIODIC, period=1000, callback=up)  # < WATCH_MS

    def region(first, count):
        return rp2.Flash(start=first * 4096, len=count * 4096)

    try:
        # The flash programs 256-byte pages.
        cribboot.lay_out(boot, rp2.Flash().ioctl(4, 0), region, progsize=256)
    finally:
        mounting[0] = False  # mounted, or a Ctrl-C stopped the boot: Python is in control


_boot()
del _boot
