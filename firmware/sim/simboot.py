# Boot script of the virtual board (MicroPython unix port; never deployed).
#
# The launcher runs `micropython -i simboot.py` from firmware/sim/ with CRIBBOARD_SIM_*
# variables set. It does what a cribboard image's boot does before the REPL (its frozen _boot.py):
# load the hardware modules, start the boot guard (cribboot.py: the launcher keeps the watchdog
# and its scratch register), lay out the flash (simflash.py: the file system mounted at / in
# place of the host's, formatted or left alone as the guard decides; the rings for the game),
# put the firmware the image holds frozen at /rom, run boot.py and, unless the boot kind says
# otherwise, main.py (the frozen one, as MicroPython prefers it; the flash's on a stock board).
# Then `-i` drops into the REPL.
#
# Everything lives in one function, deleted at the end, so the REPL's namespace holds only
# what main.py defined, as on a board.


def _cribboard_boot():
    import gc
    import os
    import sys
    import time

    # Imported while the host file system is still mounted; they stay in sys.modules and
    # stand in for the board's built-in modules (and cribboot, from the firmware the image
    # holds frozen, for the frozen _boot.py's part).
    firmware = os.getenv("CRIBBOARD_SIM_FIRMWARE")  # empty: stock MicroPython, nothing frozen
    cribboot = None  # without the boot guard: boot as stock MicroPython does
    if firmware:
        sys.path.insert(0, firmware)
        try:
            import cribboot
        except ImportError:
            pass
    import simlink
    import machine
    import neopixel
    import simflash

    if os.getenv("CRIBBOARD_SIM_BLE") != "0":
        import bluetooth  # the simulated radio; without it, a board without Bluetooth

    main_globals = globals()
    keep_modules = tuple(sys.modules)

    def sweep():
        # A board's soft reset frees the whole heap, running finalisers, so files left open
        # are closed and reach the flash. The interpreter exiting does not; do it here.
        for name in list(main_globals):
            if not name.startswith("__"):
                del main_globals[name]
        for name in list(sys.modules):
            if name not in keep_modules:
                del sys.modules[name]
        gc.collect()

    sys.atexit(sweep)  # runs on Ctrl-D at either REPL and on sys.exit() there

    def _exists(path):
        try:
            os.stat(path)
            return True
        except OSError:
            return False

    boot = os.getenv("CRIBBOARD_SIM_BOOT") or "main"  # main | raw | repl

    class Scratch:
        def get(self):
            return simlink.link.scratch()

        def set(self, value):
            simlink.link.set_scratch(value)

    class Watchdog:
        def arm(self, ms):
            simlink.link.watchdog(ms)

        def disarm(self):
            simlink.link.watchdog(0)

    guard = None
    if cribboot is not None:
        guard = cribboot.current = cribboot.Boot(Scratch(), Watchdog())
    simflash.mount(os.getenv("CRIBBOARD_SIM_FLASH"), guard)
    simflash.mount_rom(firmware)
    sys.path.clear()
    sys.path.extend(("", ".frozen", "/rom", "/lib"))
    sys.argv.clear()

    # The launcher holds the host's input, Ctrl-C included, until this point: the set-up
    # above is the board's firmware, which Ctrl-C cannot interrupt.
    simlink.link.send(b"B")
    try:
        scripts = ("boot.py", "main.py") if boot == "main" else ("boot.py",)
        for script in scripts:
            if script == "main.py" and firmware and _exists("/rom/main.py"):
                script = "/rom/main.py"  # a frozen main.py runs before the flash's (pyexec.c)
            if not _exists(script):
                continue
            try:
                execfile(script, globals())
            except SystemExit:
                # A board soft-resets when boot.py or main.py raises SystemExit.
                sweep()
                if simlink.link.request_reset(False):
                    while True:
                        time.sleep_ms(100)
            except BaseException as err:  # KeyboardInterrupt too: print it, then the REPL
                sys.print_exception(err)
    except KeyboardInterrupt:
        pass  # a Ctrl-C between scripts: on to the REPL


_cribboard_boot()
del _cribboard_boot
