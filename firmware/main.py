# Runs at power-on (and after a soft reset from the REPL): the cribbage board app.
# Ctrl-C stops it and drops to the REPL, so mpremote can always reach the board.
import gc

gc.threshold(4096)  # collect often while the app loads: a less fragmented heap (app.main resets)
try:
    import cribfw.app
except Exception as err:  # a firmware on the flash that cannot load (damaged, half copied)
    import cribboot

    cribboot.frozen_app(err)  # on a cribboard image: its own firmware instead (else re-raised)
    import cribfw.app  # (loaded just now: this binds the name here)

cribfw.app.main()
