# Frozen into the cribboard rp2 images as `_boot.py`, in place of the port's own: MicroPython
# runs it first at every start, before boot.py and main.py. It starts the boot guard (cribboot.py:
# the RP2040's or RP2350's watchdog, and its SCRATCH2 register to count boots that crashed or hung),
# then lays out the flash's storage region: the rings the game lives in at its end, littlefs at "/"
# before them, mounted, or formatted when it cannot be mounted or after two failed boots in a row.
import machine
import rp2

import cribboot


def _start():
    # The watchdog block: RP2040 and RP2350 keep the same registers at different addresses.
    import sys

    base = 0x400D8000 if "RP2350" in sys.implementation._machine else 0x40058000
    scratch = base + 0x14  # SCRATCH2: used by neither the boot ROM, the SDK nor MicroPython
    clear = base + 0x3000  # the atomic bit-clear alias of CTRL

    class Scratch:
        def get(self):
            return machine.mem32[scratch] & 0xFFFFFFFF

        def set(self, value):
            machine.mem32[scratch] = value

    class Watchdog:
        def arm(self, ms):
            machine.WDT(timeout=ms)  # the SDK's watchdog_enable: a reset of all but the clocks

        def disarm(self):
            machine.mem32[clear] = 1 << 30  # CTRL.ENABLE off (machine.WDT has no way to stop)

    boot = cribboot.current = cribboot.Boot(Scratch(), Watchdog())
    storage = rp2.Flash()  # the whole storage region, after the firmware

    def region(first, count):
        return rp2.Flash(start=first * 4096, len=count * 4096)

    # The flash programs 256-byte pages.
    cribboot.lay_out(boot, storage.ioctl(4, 0), region, progsize=256)
    # Python at the REPL (no app, or boot.py/main.py ended) runs this soft timer's callback; it
    # cannot run while MicroPython is stuck in the file system's code, or has crashed.
    machine.Timer(mode=machine.Timer.ONE_SHOT, period=cribboot.WATCH_MS // 2, callback=_up)


def _up(_timer):
    cribboot.up()


_start()
del _start
