# The running board's mutable parts, owned in one place: the game, the LED settings, the store,
# who may change the board, the links, and what the board knows about itself. The app builds it;
# the verbs (cribfw/verbs.py), the dispatcher, the links and the tasks read and change it here.

try:
    import micropython
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

from cribfw.admission import Admission
from cribfw.replies import Books


class Context:
    def __init__(self, game, renderer, profile_name, firmware_version, admission=None):
        self.game = game  # cribcore.state.GameState
        self.renderer = renderer  # cribcore.render.Renderer: brightness, budget, the frame
        self.admission = admission if admission is not None else Admission()
        self.links = []  # every connected link (USB, Bluetooth centrals, pages' WebSockets)
        self.books = Books()  # the resend memory, each sender's (cribfw/replies.py)
        self.every = 0  # how many of them asked for an event after every request (`every 1`)
        # Called with the game after each request and each push (the hall's table client keeps
        # every revision: cribfw/hall.py); None: nobody asked.
        self.on_change = None
        self.store = None  # cribfw.store.Store, once the app attached one
        self.ble = None  # cribfw.blelink.BleLink, on a board with Bluetooth
        self.web = None  # cribfw.webserver.WebServer, on a board that serves its page
        self.net = None  # its network (cribfw.wifinet.WifiNet; the virtual board's HostNet)
        self.settings_rev = 0  # bumped when brightness or budget change
        self.t_ms = 0  # animation time of the last frame drawn
        self.refresh = self.draw  # shows any change on the LEDs now (the app's show_changes)
        self.selftest_requested = False  # set by `test` and the deal button at power-on
        # Kept as bytes so writing the hello allocates nothing.
        self.profile_name = profile_name.encode()
        self.firmware_version = firmware_version.encode()
        self.hello_head = None  # the hello's fields that never change, written once (verbs.py)
        self.ble_name = b""  # the name the board advertises over Bluetooth
        self.uid = b""  # the hex of machine.unique_id(), upper case (the hello's uid=)
        self.stored = b""  # where the game came from at boot (the hello's store=)
        self.boot_fs = b""  # what the boot did with the file system (cribboot.py), if known
        self.boot_failed = 0  # boots in a row that crashed or hung before this one
        # Health (the `health` verb): uptime, and lines the board could not take.
        self.up_s = 0
        self.up_ms = 0  # the part of a second not yet in up_s
        self.bad_lines = 0  # requests answered bad_line, unknown or too_long
        self.heap_free = -1  # the free heap as last measured (-1: not yet), and when (ms)
        self.heap_at = 0

    def draw(self):
        """Without an app (tests): the game drawn into the renderer's frame, not shown."""
        self.renderer.draw(self.game, self.t_ms)

    def attach_store(self, store, stored):
        """The store keeping the game (cribfw.store.Store), and where the game came from."""
        self.store = store
        self.stored = stored

    def attach_ble(self, link, name):
        """The Bluetooth link (cribfw.blelink.BleLink) and the name it advertises."""
        self.ble = link
        self.ble_name = name

    def uptime(self):
        """Seconds since the board started (the board's history counts its life with it)."""
        return self.up_s

    @micropython.native
    def tick(self, elapsed_ms):
        """Count `elapsed_ms` of uptime (the render task calls this; it never wraps)."""
        ms = self.up_ms + elapsed_ms
        self.up_s += ms // 1000
        self.up_ms = ms % 1000
