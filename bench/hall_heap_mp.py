# Runs on MicroPython (bench/hall_firmware_bench.py starts it): the heap a board's hall client
# costs. The app is built as main() builds it (the firmware as deployed, .mpy), then the table
# client is added, connects to the broker named in argv and publishes; free heap (after a
# collection) is printed before and after, with the bytes allocated for one change published.
#   micropython -X heapsize=128wK hall_heap_mp.py HOST PORT PASSWORD [CA_FILE]
# CA_FILE: a file with the hall CA's DER bytes in base64 (a TLS broker, as /hall.json has it;
# a file, as the unix port's command line does not take an argument that long).
# Without a HOST ("-"), `socket` is a stand-in (a board without a network, such as the emulated
# Pico): the client's modules and buffers, no connection.
import gc
import sys
import time


def collected():
    gc.collect()
    return gc.mem_free(), gc.mem_alloc()


host = sys.argv[1] if len(sys.argv) > 1 else "-"
if host == "-":

    class _NoSocket:
        pass

    sys.modules["socket"] = _NoSocket()  # umqtt.simple imports it; nothing here connects

from checks import FakePixels

from cribcore.layout import HOLES
from cribcore.profiles import PROFILES
from cribfw.app import App

app = App(FakePixels(HOLES), sys.stdin, sys.stdout, PROFILES["sim"])
free0, alloc0 = collected()
print("without", free0, alloc0)

# What each module costs once imported (its bytecode in RAM when deployed as .mpy; on a frozen
# image only its globals), then what the client itself holds (buffers, topics, umqtt's object).
for name in (
    "umqtt.simple",
    "cribfw.boundedsock",
    "cribfw.hallpayload",
    "cribfw.hallmemory",
    "cribfw.hallconfig",
    "cribfw.halltls",
    "cribfw.hall",
):
    __import__(name)
    print("module", name, collected()[1])

from cribfw import hallconfig

config = hallconfig.parse(
    {
        "hall": "club",
        "table": 1,
        "host": host if host != "-" else "127.0.0.1",
        "port": int(sys.argv[2]) if host != "-" else 1883,
        "user": "table-1",
        "password": sys.argv[3] if host != "-" else "x",
        "ca": open(sys.argv[4]).read().strip() if len(sys.argv) > 4 else None,
    }
)
from cribfw.hallstart import add_hall

hall = add_hall(app, config)
free1, alloc1 = collected()
print("added", free1, alloc1)

if host != "-":
    from cribfw.hall import ONLINE

    deadline = time.ticks_add(time.ticks_ms(), 10000)
    while hall.phase != ONLINE or hall.published < 3 or hall.unsent():
        hall.step(time.ticks_ms())
        time.sleep_ms(5)
        if time.ticks_diff(deadline, time.ticks_ms()) < 0:
            print("error the client did not come online")
            sys.exit(1)
    free2, alloc2 = collected()
    print("running", free2, alloc2)
    # One change published (state, then event): bytes allocated, no collection between.
    game = app.ctx.game
    costs = []
    for _ in range(5):
        gc.collect()
        gc.disable()
        before = gc.mem_alloc()
        game.peg(0, 1)
        published = hall.published
        while hall.published < published + 2:
            hall.step(time.ticks_ms())
        costs.append(gc.mem_alloc() - before)
        gc.enable()
    print("per_change", min(costs), max(costs))
print("done")
