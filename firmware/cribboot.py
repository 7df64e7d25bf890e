# The board's start: a guard against a flash that crashes MicroPython, and the facts the boot
# hands to the app (where the game lives, what happened to the file system). A module of its own,
# outside the cribfw package, because the boot script imports it before the file system is
# mounted: it stays loaded for the app, while cribfw is imported later (from the flash when a
# newer firmware was deployed there, else frozen in the image).
#
# A damaged littlefs can make MicroPython itself crash (a hard fault) or hang while it mounts or
# reads the file system: nothing in Python can catch that. So the boot script of a cribboard
# image (firmware/ports/rp2/_boot.py; the virtual board's sim/simboot.py plays that part) starts
# a Boot before it touches the flash:
#   - a hardware watchdog runs during the boot (WATCH_MS): a crash or a hang becomes a reset;
#   - a register that survives that reset (but not a power cut) counts the boots in a row that
#     did not come up;
#   - the boot came up once Python is in control again: the app started (App.run calls up()),
#     the app ended with an exception or a Ctrl-C, or the REPL is reached (the boot script's
#     soft timer calls up(): it cannot run while MicroPython is stuck inside littlefs). up()
#     stops the watchdog (so mpremote and the REPL are never reset) and clears the count.
# After SAFE_AFTER failed boots in a row the boot script formats the file system instead of
# mounting it, as MicroPython itself does with a flash it cannot mount; after more, it leaves
# the file system alone (never a format loop). The game is not in the file system but in a Ring
# in a raw region of the flash (cribfw/ring.py), and the firmware is frozen in the image: neither
# is lost. The hello tells hosts (fields `fs` and `boots`).
#
# The hardware is passed in: `scratch` has get() and set(value) (a 32-bit register that survives
# a watchdog reset), `watchdog` has arm(ms) and disarm().

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


SAFE_AFTER = const(2)  # failed boots in a row before the file system is formatted
WATCH_MS = const(5000)  # the watchdog's time for a boot (the RP2040's longest is 8.3 s)
STATE_BLOCKS = const(32)  # the game's ring: 128 KiB of 4 KiB blocks at the end of the flash
ADMIT_BLOCKS = const(4)  # the admitted Bluetooth devices' ring, just before it
RESERVED_BLOCKS = const(36)  # taken from the end of the file system's region for both rings
_MARK = const(0xC1B0)  # in the upper half of the register while a boot is in progress

# How the boot treated the file system (the hello's `fs` field).
FS_OK = "ok"  # mounted
FS_FORMATTED = "formatted"  # could not be mounted, or crashed the board twice: formatted
FS_OFF = "off"  # the board kept failing even after the format: left unmounted


class Boot:
    """One start of the board, made by the boot script before it touches the flash."""

    def __init__(self, scratch, watchdog):
        self._scratch = scratch
        self._watchdog = watchdog
        value = scratch.get()
        # Boots in a row that crashed or hung before coming up (this one not counted).
        self.failed = value & 0xFFFF if (value >> 16) & 0xFFFF == _MARK else 0
        scratch.set(_MARK << 16 | min(self.failed + 1, 0xFFFF))
        watchdog.arm(WATCH_MS)
        self.fs = ""  # FS_OK, FS_FORMATTED or FS_OFF once the boot script decided
        # Raw flash regions for cribfw.ring.Ring, as (device, first block, blocks): the game's,
        # and the admitted devices'. None: keep them as files on the file system.
        self.state = None  # type: tuple | None
        self.admitted = None  # type: tuple | None
        self.is_up = False

    def file_system(self):
        """What to do with the file system now: FS_OK (mount it, formatting only if the mount
        fails), FS_FORMATTED (format it) or FS_OFF (leave it alone)."""
        if self.failed < SAFE_AFTER:
            return FS_OK
        return FS_FORMATTED if self.failed == SAFE_AFTER else FS_OFF

    def up(self):
        """Python is in control: the boot did not crash. Stops the watchdog, clears the count."""
        if not self.is_up:
            self.is_up = True
            self._watchdog.disarm()
            self._scratch.set(0)


def lay_out(boot, blocks, region, **littlefs):
    """Lay out the flash for `boot`: the rings in the last RESERVED_BLOCKS of the storage's
    `blocks` (4 KiB each), the file system before them, mounted at /, formatted or left alone as
    boot.file_system() decides. `region(first, count)` makes a block device of part of the
    storage (rp2.Flash(start=, len=) on a Pico); `littlefs` are VfsLfs2's arguments."""
    fs_blocks = blocks - RESERVED_BLOCKS
    rings = region(fs_blocks, RESERVED_BLOCKS)
    boot.admitted = (rings, 0, ADMIT_BLOCKS)
    boot.state = (rings, ADMIT_BLOCKS, STATE_BLOCKS)
    action = boot.file_system()
    if action == FS_OFF:
        boot.fs = FS_OFF
        return
    formatted = mount_littlefs(region(0, fs_blocks), action == FS_FORMATTED, **littlefs)
    boot.fs = FS_FORMATTED if formatted else FS_OK


def mount_littlefs(device, format_first=False, **littlefs):
    """Mount littlefs from `device` at /, formatting it first if asked or when the mount fails
    (as MicroPython's own boot does with a flash it cannot mount). True if it was formatted."""
    import os

    import vfs

    if format_first:
        vfs.VfsLfs2.mkfs(device, **littlefs)
    try:
        root = vfs.VfsLfs2(device, **littlefs)
    except OSError:
        vfs.VfsLfs2.mkfs(device, **littlefs)
        root = vfs.VfsLfs2(device, **littlefs)
        format_first = True
    vfs.mount(root, "/")
    os.chdir("/")
    return format_first


current = None  # type: Boot | None  # this start's Boot, set by the boot script (None: stock)


def frozen_app(err):
    """main.py's way out when the firmware on the flash cannot load (damaged, half copied):
    forget what of it was loaded and import the firmware frozen in the image; without one (stock
    MicroPython) raise `err` again."""
    import sys

    sys.print_exception(err)
    for name in list(sys.modules):
        if name.startswith("crib") and name != "cribboot":
            del sys.modules[name]
    everywhere = sys.path[:]
    sys.path[:] = [p for p in everywhere if p]  # not the flash ('')
    try:
        import cribfw.app  # noqa: F401
    except ImportError:
        raise err
    finally:
        sys.path[:] = everywhere
    print("main.py: the firmware on the flash failed to load; running the one in the image")


def up():
    """The app is running (or has ended in Python): see Boot.up. Nothing on stock MicroPython."""
    if current is not None:
        current.up()
