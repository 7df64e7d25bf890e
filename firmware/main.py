# Runs at power-on (and after a soft reset from the REPL): the cribbage board app.
# Ctrl-C stops it and drops to the REPL, so mpremote can always reach the board.
import gc

gc.threshold(4096)  # collect often while the app loads: a less fragmented heap (app.main resets)
try:
    import cribfw.app
except Exception as err:  # a firmware on the flash that cannot load (damaged, half copied)
    import sys

    sys.print_exception(err)
    for name in list(sys.modules):
        if name.startswith("crib") and name != "cribboot":
            del sys.modules[name]
    everywhere = sys.path[:]
    sys.path[:] = [p for p in everywhere if p]  # not the flash: the image's frozen firmware
    try:
        import cribfw.app
    finally:
        sys.path[:] = everywhere
    print("main.py: the firmware on the flash failed to load; running the one in the image")

cribfw.app.main()
