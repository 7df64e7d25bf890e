# Runs on MicroPython (bench/web_bench.py starts it): the heap the board's own web server costs,
# and each page connected to it. The app is built as main() builds it (the firmware as deployed,
# .mpy), then the server is added and started on 127.0.0.1:PORT; the bench opens WebSockets and
# writes a line on stdin after each: the heap in use (after a collection) is printed each time.
#   micropython -X heapsize=144wK web_heap_mp.py PORT PAGE_DIR
import gc
import sys


def collected():
    gc.collect()
    return gc.mem_alloc()


import asyncio  # noqa: E402

asyncio.StreamReader  # noqa: B018  (as main() loads them)
asyncio.Event  # noqa: B018
from checks import FakePixels  # noqa: E402

from cribcore.layout import HOLES  # noqa: E402
from cribcore.profiles import PROFILES  # noqa: E402
from cribfw.app import App  # noqa: E402

app = App(FakePixels(HOLES), sys.stdin, sys.stdout, PROFILES["sim"])
alloc0 = collected()
print("without", alloc0)
for name in ("cribfw.weblink", "cribfw.pagefiles", "cribfw.webserver"):
    __import__(name)
    print("module", name, collected())

from cribfw import pagefiles  # noqa: E402
from cribfw.webserver import WebServer  # noqa: E402

server = WebServer(app.dispatcher, app.ctx.admission, pagefiles._from_folder(sys.argv[2]))


async def main():
    await server.start("127.0.0.1", int(sys.argv[1]))
    await asyncio.sleep_ms(10)
    print("server", collected())
    reader = asyncio.StreamReader(sys.stdin)
    while True:
        line = await reader.readline()
        if not line:
            break
        await asyncio.sleep_ms(50)  # the connections' tasks settle
        print("sockets", server.sockets(), len(server.conns), collected())


asyncio.run(main())
