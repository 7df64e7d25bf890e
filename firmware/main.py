# Runs at power-on (and after a soft reset from the REPL): the cribbage board app.
# Ctrl-C stops it and drops to the REPL, so mpremote can always reach the board.
import gc

gc.threshold(4096)  # collect often while the app loads: a less fragmented heap (app.main resets)
import cribfw.app

cribfw.app.main()
