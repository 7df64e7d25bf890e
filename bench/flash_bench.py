# Flash figures of the store (firmware/cribfw/store.py). One file, two parts:
#
# * Run ON MicroPython (`micropython bench/flash_bench.py`, MICROPYPATH=firmware): a real littlefs2
#   (VfsLfs2, configured as MicroPython's rp2 port does: 4 KiB blocks, progsize 256) on a RAM block
#   device that counts erases per block and bytes programmed, holding the firmware tree like a
#   board's flash. The store saves scripted 121-point games at table pacing on a fake clock,
#   driven exactly as its task drives it (a poll every 50 ms, Store.save_due). Prints
#   "key value ..." lines.
# * Run by CPython (`python bench/flash_bench.py`, or bench/run.py): runs the part above, turns its
#   lines into the report, and times power-on -> the restored board's first LED frame on the
#   virtual board. Figures only, no asserts on speed.
#
# The game script (deterministic): about 10 deals, each: the deal passes (1 change), 8 pegging
# scores of 1-2 points 3-6 s apart, 3 shows (pone's hand, dealer's hand, crib) 15-30 s apart,
# a mistaken show undone and re-pegged every third deal; a new game when one is won.
# Entry styles: "host" (an app pegs each score in one request) and "buttons" (+1 presses 0.3 s
# apart, a change each); "no debounce" saves after every change, for comparison.
import sys

GAMES = {"host": 300, "buttons": 60, "nodebounce": 60}  # 300: a hundred nights of three games
GAMES_PER_YEAR = 3 * 365
ENDURANCE = 100000  # erase cycles of typical NOR flash
BLOCK = 4096
PICO2W_BLOCKS = 640  # Pico 2 W: 4 MiB flash - 1.5 MiB firmware = 2.5 MiB littlefs
PICOW_BLOCKS = 212  # Pico W: 848 KiB littlefs (the smallest supported board)


# --- the MicroPython part ------------------------------------------------------------------------


class CountingFlash:
    """A NOR-like RAM block device (extended protocol): counts erases per block and programs."""

    def __init__(self, blocks, block_size=BLOCK):
        from array import array

        self.block_size = block_size
        self.blocks = blocks
        self.data = bytearray(blocks * block_size)
        self.erased = b"\xff" * block_size
        for block in range(blocks):  # as shipped: erased
            self.data[block * block_size : (block + 1) * block_size] = self.erased
        self.erases = array("I", [0] * blocks)
        self.programs = 0
        self.program_bytes = 0

    def readblocks(self, block, buf, offset=0):
        at = block * self.block_size + offset
        buf[:] = memoryview(self.data)[at : at + len(buf)]

    def writeblocks(self, block, buf, offset=None):
        if offset is None:  # the simple protocol: erase, then program the whole block
            self.ioctl(6, block)
            offset = 0
        at = block * self.block_size + offset
        self.data[at : at + len(buf)] = buf
        self.programs += 1
        self.program_bytes += len(buf)

    def ioctl(self, op, arg):
        if op == 4:
            return self.blocks
        if op == 5:
            return self.block_size
        if op == 6:  # erase
            at = arg * self.block_size
            self.data[at : at + self.block_size] = self.erased
            self.erases[arg] += 1
        return 0


class Rand:
    """A small deterministic generator (the same numbers on every run and interpreter)."""

    def __init__(self, seed):
        self.x = seed

    def below(self, n):
        self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return (self.x >> 8) % n

    def between(self, low, high):
        return low + self.below(high - low + 1)


class Table:
    """A board, its settings and the store, on a fake clock in ms."""

    def __init__(self, store):
        from cribcore.state import GameState

        class Settings:
            brightness = 128
            budget_ma = 400

        self.board = GameState()
        self.settings = Settings()
        self.store = store
        self.now = 0
        self.changes = 0

    def wait(self, ms):
        """Let time pass as the store task sees it: a poll every 50 ms."""
        end = self.now + ms
        while self.now < end:
            self.now += 50
            self.store.save_due(self.board, self.settings, self.now)

    def change(self, action, *args):
        action(*args)
        self.changes += 1
        self.store.changed(self.now)


def play_game(table, rand, buttons):
    b = table.board
    deal = 0
    while b.winner < 0:
        if deal:
            table.wait(rand.between(40000, 70000))  # shuffle, deal, discard, cut
            table.change(b.next_dealer)
        pone = 1 - b.dealer
        for i in range(8):  # pegging
            if b.winner >= 0:
                break
            table.wait(rand.between(3000, 6000))
            score(table, (pone, b.dealer)[i % 2], rand.between(1, 2), buttons)
        shows = (
            (pone, rand.between(0, 10)),
            (b.dealer, rand.between(0, 10)),
            (b.dealer, rand.between(0, 8)),
        )  # hands about 5 points, the crib about 4
        for k in range(3):
            player, points = shows[k]
            if b.winner >= 0 or not points:
                continue
            table.wait(rand.between(15000, 30000))
            if k == 1 and deal % 3 == 2:  # a miscount: pegged, noticed, undone, pegged again
                score(table, player, min(points + 2, 29), buttons)
                table.wait(3000)
                table.change(b.undo)
            score(table, player, points, buttons)
        deal += 1
    table.wait(rand.between(20000, 40000))
    table.change(b.new_game)
    return deal


def score(table, player, points, buttons):
    b = table.board
    if not buttons:
        table.change(b.peg, player, points)
        return
    for i in range(points):  # +1 presses 0.3 s apart
        if b.winner >= 0:
            return
        if i:
            table.wait(300)
        table.change(b.peg, player, 1)


def copy_tree(source, target):
    import os

    for entry in os.ilistdir(source):
        name = entry[0]
        # (ports/ holds the images' build, the images among it, none of it on a board)
        if name in ("sim", "ports", "__pycache__") or name.startswith("."):
            continue
        if entry[1] == 0x4000:
            os.mkdir(target + "/" + name)
            copy_tree(source + "/" + name, target + "/" + name)
        else:
            with open(source + "/" + name, "rb") as src, open(target + "/" + name, "wb") as dst:
                dst.write(src.read())


def mp_main(firmware):
    import gc
    import os
    import time

    import vfs

    from cribfw.store import MAX_MS, QUIET_MS, STATE_DIR, Store

    print("config", QUIET_MS, MAX_MS, PICO2W_BLOCKS, BLOCK)
    for style in ("host", "buttons", "nodebounce"):
        flash = CountingFlash(PICO2W_BLOCKS)
        vfs.VfsLfs2.mkfs(flash, progsize=256)
        mount = "/flash_" + style
        vfs.mount(vfs.VfsLfs2(flash, progsize=256), mount)
        copy_tree(firmware, mount)
        root = mount + "/" + STATE_DIR  # as store.attach() does
        os.mkdir(root)
        free = os.statvfs(root)[3]  # free blocks, littlefs's to spread the writes over
        base = list(flash.erases)
        base_bytes = flash.program_bytes
        quiet = 0 if style == "nodebounce" else QUIET_MS
        store = Store(root, quiet_ms=quiet, max_ms=MAX_MS if quiet else 0)
        table = Table(store)
        rand = Rand(1234)
        deals = 0
        games = GAMES[style]
        for _ in range(games):
            deals += play_game(table, rand, style != "host")
        wear = [flash.erases[i] - base[i] for i in range(flash.blocks)]
        wear.sort()
        print(
            "style",
            style,
            games,
            deals,
            table.changes,
            store.saves,
            sum(wear),
            flash.program_bytes - base_bytes,
            wear[-1],
            wear[len(wear) // 2],
            sum(1 for n in wear if n),
            free,
            table.now // 1000,
        )
        # Boot: reading the saved game back (on this desktop; a board's MCU is slower).
        t = time.ticks_us()
        Store(root).load(table.board.__class__(), table.settings)
        print("load_us", style, time.ticks_diff(time.ticks_us(), t))
        vfs.umount(mount)
        flash = table = store = None
        gc.collect()
    print("done")


# --- the CPython part ----------------------------------------------------------------------------


def run_on_micropython():
    import os
    import subprocess
    from pathlib import Path

    from cribboard.virtual.interpreter import find_micropython

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, MICROPYPATH="%s:.frozen" % (root / "firmware"))
    result = subprocess.run(
        [
            str(find_micropython()),
            "-X",
            "heapsize=2048wK",
            str(root / "bench" / "flash_bench.py"),
            str(root / "firmware"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=root,
    )
    lines = {}
    for line in result.stdout.splitlines():
        words = line.split()
        if words:
            lines.setdefault(words[0], []).append(words[1:])
    if result.returncode != 0 or "done" not in lines:
        raise SystemExit(
            "flash_bench.py on MicroPython failed (exit %d):\n%s%s"
            % (result.returncode, result.stdout, result.stderr)
        )
    return lines


def time_to_restored_frame(repeats=15):
    """(reset -> first frame in s, launcher start -> first frame in s, frames agree): the board
    restores a mid-game state with a long undo history; before each reset the brightness is
    changed and not yet saved, so the restored frame differs from the one showing."""
    import statistics
    import tempfile
    import time
    from pathlib import Path

    import serial

    from cribboard.virtual import VirtualBoard, VirtualControl
    from cribfw.store import QUIET_MS

    frames = []

    def on_frame(rgb):
        frames.append((time.monotonic(), rgb))

    def first_after(t0, rgb, sim):
        sim.wait_frame(lambda f: f == rgb, timeout=10)
        return min(t for t, f in frames if t >= t0 and f == rgb) - t0

    def exchange(link, line):
        link.write(line + b"\n")
        while True:
            reply = link.readline()
            if not reply.startswith(b"!"):
                return reply

    with tempfile.TemporaryDirectory() as tmp:
        image = Path(tmp) / "flash.img"
        # (Nested, not one parenthesized `with`: this file runs on MicroPython too, whose
        # parser does not take that form.)
        with VirtualBoard(flash=image, on_frame=on_frame) as vb:  # noqa: SIM117
            with VirtualControl(vb.control) as sim, serial.Serial(vb.port, timeout=5) as link:
                for i in range(40):  # mid-game: 40 moves, a 40-step undo history
                    exchange(link, b"peg %d %d" % (i % 2, 1 + i % 5))
                exchange(link, b"deal")
                time.sleep(QUIET_MS / 1000 + 0.5)  # saved
                saved = sim.wait_frame()
                resets = []
                for i in range(repeats):
                    exchange(link, b"bright %d" % (60 + i))  # shown, not saved yet
                    sim.wait_frame(lambda f: f != saved)
                    t0 = time.monotonic()
                    vb.reset()
                    resets.append(first_after(t0, saved, sim))
                    hello = link.readline()
                    while b"! hello " not in hello:
                        hello = link.readline()
                store_field = hello.split(b"store=")[1].split()[0].decode()
        starts = []
        for _ in range(3):
            frames.clear()
            t0 = time.monotonic()
            with (
                VirtualBoard(flash=image, on_frame=on_frame) as vb,
                VirtualControl(vb.control) as sim,
            ):
                starts.append(first_after(t0, saved, sim))
    return (
        statistics.median(resets),
        min(resets),
        max(resets),
        statistics.median(starts),
        store_field,
    )


def main():
    import time

    started = time.monotonic()
    print("cribboard flash benchmark")
    fig = run_on_micropython()
    quiet, max_ms, blocks, block = (int(v) for v in fig["config"][0])
    print(
        "\n1. The store's writes and wear (littlefs2 set up as MicroPython's rp2 port does: "
        "%d x %d KiB blocks as on a Pico 2 W, progsize 256, block_cycles 100; the firmware "
        "tree on it)" % (blocks, block // 1024)
    )
    minutes = [int(v[-1]) / int(v[1]) / 60 for v in fig["style"]]
    print(
        "   save %d ms after the last change, at most %d ms after the first; scripted "
        "121-point games, %.0f-%.0f minutes of play each"
        % (quiet, max_ms, min(minutes), max(minutes))
    )
    print(
        "   %-22s %6s %6s %8s %7s %8s %9s   %s"
        % (
            "per game",
            "games",
            "deals",
            "changes",
            "saves",
            "erases",
            "KiB prog",
            "run: blocks erased, erases of the median / most erased block",
        )
    )
    names = {
        "host": "host pegs each score",
        "buttons": "+1 button presses",
        "nodebounce": "presses, no debounce",
    }
    per_game = {}
    for values in fig["style"]:
        style = values[0]
        g, deals, changes, saves, erases, prog, worst, median, worn, free, _ = (
            int(v) for v in values[1:]
        )
        per_game[style] = (g, saves / g, erases / g, worst, median, free)
        print(
            "   %-22s %6d %6.1f %8.1f %7.1f %8.1f %9.1f   %d of %d, %d / %d"
            % (
                names[style],
                g,
                deals / g,
                changes / g,
                saves / g,
                erases / g,
                prog / g / 1024,
                worn,
                blocks,
                median,
                worst,
            )
        )
    print(
        "\n   Wear per year of nightly play: %d games a night, %d a year; NOR flash lasts "
        "about %dk erase cycles per block"
        % (GAMES_PER_YEAR // 365, GAMES_PER_YEAR, ENDURANCE // 1000)
    )
    for style in ("host", "buttons", "nodebounce"):
        g, saves, erases, worst, median, free = per_game[style]
        year = erases * GAMES_PER_YEAR
        spread = year / free
        picow_free = free - (PICO2W_BLOCKS - PICOW_BLOCKS)
        worst_year = worst * GAMES_PER_YEAR / g
        print(
            "   %-22s %6.0f saves, %6.0f erases a year; spread over %d free blocks: %4.0f "
            "cycles/block/year (%.0f years to %dk)"
            % (
                names[style],
                saves * GAMES_PER_YEAR,
                year,
                free,
                spread,
                ENDURANCE / spread,
                ENDURANCE // 1000,
            )
        )
        print(
            "   %-22s most erased block at that rate: %4.0f cycles/year (%.0f years); on a Pico "
            "W (848 KiB, %d free blocks) spread: %4.0f (%.0f years)"
            % (
                "",
                worst_year,
                ENDURANCE / worst_year,
                picow_free,
                year / picow_free,
                ENDURANCE * picow_free / year,
            )
        )
    for style, us in fig["load_us"]:
        if style == "host":
            print(
                "   reading the saved game at boot (Store.load, unix port on this desktop): "
                "%.2f ms" % (int(us) / 1000)
            )

    median, fastest, slowest, start, source = time_to_restored_frame()
    print(
        "\n2. Power-on to the restored board on the LEDs (virtual board; a 40-move game with "
        "its undo history)"
    )
    print(
        "   hard reset (SIGKILL + new interpreter) -> first frame: median %.0f ms "
        "(%.0f..%.0f ms, 15 resets); hello says store=%s"
        % (median * 1000, fastest * 1000, slowest * 1000, source)
    )
    print(
        "   launcher start (VirtualBoard(flash=...)) -> first frame: median %.0f ms (3 starts)"
        % (start * 1000)
    )
    print(
        "   the first frame after each restart is the restored game itself (compared byte for "
        "byte with the frame shown when it was saved)"
    )
    print("\n(flash benchmark took %.1f s)" % (time.monotonic() - started))


def _paths():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for extra in (root / "firmware", root / "host"):  # cribfw; cribboard if not installed
        if str(extra) not in sys.path:
            sys.path.append(str(extra))


if sys.implementation.name != "micropython":
    _paths()
if __name__ == "__main__":
    if sys.implementation.name == "micropython":
        mp_main(sys.argv[1] if len(sys.argv) > 1 else "firmware")
    else:
        main()
