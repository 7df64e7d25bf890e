# Boot script of the virtual board (MicroPython unix port; never deployed).
#
# The launcher runs `micropython -i simboot.py` from firmware/sim/ with CRIBBOARD_SIM_*
# variables set. It does what a board's boot does before the REPL: load the hardware modules,
# mount the flash at / (the host file system leaves the firmware's view), run boot.py and,
# unless the boot kind says otherwise, main.py. Then `-i` drops into the REPL.
#
# Everything lives in one function, deleted at the end, so the REPL's namespace holds only
# what main.py defined, as on a board.


def _cribboard_boot():
    import gc
    import os
    import sys
    import time

    # Imported while the host file system is still mounted; they stay in sys.modules and
    # stand in for the board's built-in modules.
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

    boot = os.getenv("CRIBBOARD_SIM_BOOT") or "main"  # main | raw | repl
    simflash.mount(os.getenv("CRIBBOARD_SIM_FLASH"), os.getenv("CRIBBOARD_SIM_FIRMWARE"))
    sys.path.clear()
    sys.path.extend(("", ".frozen", "/lib"))
    sys.argv.clear()

    # The launcher holds the host's input, Ctrl-C included, until this point: the set-up
    # above is the board's firmware, which Ctrl-C cannot interrupt.
    simlink.link.send(b"B")
    try:
        scripts = ("boot.py", "main.py") if boot == "main" else ("boot.py",)
        for script in scripts:
            try:
                os.stat(script)
            except OSError:
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
