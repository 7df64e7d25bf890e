# Who may change the score. A USB host is always trusted (whoever holds the cable holds the board).
# A Bluetooth central may read and watch from the moment it connects, but changes the board only
# once it is admitted, or while the owner has switched the board to open mode. Pico W / Pico 2 W
# builds (BTstack) offer no pairing or bonding, so the decision is the application's: a button
# press on the board, by someone at the table.
#
# The flow: a central that is not admitted asks for a change and gets `err denied`; the board then
# calls for a decision for WINDOW_MS (the renderer double-blinks the win hole while `calling`): a tap
# of the deal button within that window admits that central (the panel asks `take_tap` first and
# skips the tap's usual action when it admits). An admitted central's address is remembered
# (at most MAX_ADMITTED, the oldest dropped first), so a reconnect of the same device is admitted
# at once; `admit clear` forgets them all and takes the trust back from connected centrals.
#
# A link is any object with `trusted` (bool) and `address` (None for a USB link; for a central, 7
# bytes: the address type and the 6 address bytes as the BLE stack reports them).
#
# Persistence (the list and open mode survive a power cut): on a board with Bluetooth, main()
# gives load() a file, written on every change (cribfw/admitfile.py, imported only then).

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


from cribfw.clock import ticks_add, ticks_diff, ticks_ms

WINDOW_MS = const(30000)  # how long a tap of deal admits the central that was refused
MAX_ADMITTED = const(8)
ADDR_LEN = const(7)  # address type + 6 bytes


class Admission:
    def __init__(self):
        self.open = False  # open mode: every link may change the board
        self.count = 0  # addresses remembered
        self.addrs = bytearray(MAX_ADMITTED * ADDR_LEN)  # count addresses, oldest first
        self.candidate = None  # the link a tap of deal would admit
        self._until = 0
        self.rev = 0  # bumped on every change: the dispatcher pushes `! admit`
        self.path = None  # where the list is kept (load() sets it)
        self.errors = 0  # saves that failed

    # --- questions --------------------------------------------------------------------------

    def may_change(self, link):
        return link.trusted or self.open

    def knows(self, address):
        """Whether `address` (7 bytes) was admitted before."""
        return self._find(address) >= 0

    def calling(self, now=None):
        """Whether a refused central waits for a tap of deal (the board shows it)."""
        if self.candidate is None or self.open:  # open mode: nobody needs admitting
            return False
        if now is None:
            now = ticks_ms()
        return ticks_diff(self._until, now) > 0

    # --- events -----------------------------------------------------------------------------

    def request(self, link, now=None):
        """`link` was refused a change: open (or restart) the window for it."""
        if now is None:
            now = ticks_ms()
        self.candidate = link
        self._until = ticks_add(now, WINDOW_MS)  # ticks wrap: never plain +

    def take_tap(self, now=None):
        """A tap of deal: admit the waiting central and return True (the tap's usual action is
        then skipped); False when no central waits."""
        if not self.calling(now):
            self.candidate = None
            return False
        link = self.candidate
        self.candidate = None
        self.admit(link)
        return True

    def admit(self, link):
        link.trusted = True
        address = link.address
        if address is not None and self._find(address) < 0:
            if self.count == MAX_ADMITTED:  # full: forget the oldest
                self.addrs[0 : (MAX_ADMITTED - 1) * ADDR_LEN] = self.addrs[ADDR_LEN:]
                self.count -= 1
            at = self.count * ADDR_LEN
            for i in range(ADDR_LEN):
                self.addrs[at + i] = address[i]
            self.count += 1
            self._save()
        self.rev += 1

    def forget(self, link):
        """`link` went away: it can no longer be admitted by a tap."""
        if self.candidate is link:
            self.candidate = None

    def set_open(self, on):
        """Switch open mode; setting the mode it is in changes nothing (no `! admit`)."""
        on = bool(on)
        self.candidate = None
        if on != self.open:
            self.open = on
            self._save()
            self.rev += 1

    def clear(self, links):
        """Forget every admitted address and take the trust back from connected centrals;
        nothing changes (no `! admit`) when nobody is admitted."""
        self.candidate = None
        changed = self.count > 0
        self.count = 0
        for link in links:
            if link.address is not None and link.trusted:
                link.trusted = False
                changed = True
        if changed:
            self._save()
            self.rev += 1

    def _find(self, address):
        for slot in range(self.count):
            at = slot * ADDR_LEN
            same = True
            for i in range(ADDR_LEN):
                if self.addrs[at + i] != address[i]:
                    same = False
                    break
            if same:
                return slot
        return -1

    def load(self, path):
        """Read the list and open mode from `path` (kept for later saves); True if read."""
        self.path = path
        from cribfw.admitfile import load

        return load(self, path)

    def _save(self):
        if self.path is not None:  # only a board with Bluetooth keeps the file
            from cribfw.admitfile import save

            save(self, self.path)
