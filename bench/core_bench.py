# Benchmark of the shared core, run ON MicroPython (bench/run.py launches it with
# MICROPYPATH=firmware:tests/core and turns its output into a report). No pytest, no asserts on
# speed: it prints one "key value ..." line per figure (integers: microseconds, bytes, counts).
#
#   micropython bench/core_bench.py [FRAMES [SCORES]]
import gc
import sys
import time

try:
    ticks_us = time.ticks_us
    ticks_diff = time.ticks_diff
    mem_alloc = gc.mem_alloc
except AttributeError:
    raise SystemExit("core_bench.py runs on MicroPython (time.ticks_us, gc.mem_alloc)")

from array import array

FRAMES = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
SCORES = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
FRAME_STEP_MS = 50  # animation time between frames: the preview blinks every 5 frames
UNDO_EVERY = 8  # one undo after every 8th score


def heap():
    gc.collect()
    return mem_alloc()


def emit(key, *values):
    print(key, *values)


# --- 4. heap used by the core: measured first, before anything else is imported -------------


def measure_imports():
    base = heap()
    last = base
    for name in ("cribcore.layout", "cribcore.state", "cribcore.render", "cribcore.protocol"):
        __import__(name)
        now = heap()
        emit("import", name, now - last)
        last = now
    emit("import_total", last - base)


measure_imports()

from checks import FakePixels  # noqa: E402
from mp_no_alloc import busy_board  # noqa: E402

from cribcore.layout import HOLES  # noqa: E402  (after the import figures)
from cribcore.render import Renderer  # noqa: E402
from cribcore.state import NO_WINNER, GameState  # noqa: E402


def measure_objects():
    pixels = FakePixels(HOLES)  # stands in for NeoPixel's own buffer: not counted
    before = heap()
    board = busy_board()
    mid = heap()
    renderer = Renderer(pixels)
    after = heap()
    emit("obj_board", mid - before)
    emit("obj_renderer", after - mid)
    emit("heap_in_use", after)  # everything live now: interpreter state, core, bench
    return board, renderer


# --- timing helpers ---------------------------------------------------------------------------


def samples(n):
    return array("I", bytes(4 * n))


def report(key, times, n):
    s = sorted(times[i] for i in range(n))
    emit(key, n, s[n // 2], s[(n * 99) // 100], s[n - 1], s[0])  # count median p99 worst best


def measure_timer_overhead(n):
    t = samples(n)
    for i in range(n):
        t0 = ticks_us()
        t[i] = ticks_diff(ticks_us(), t0)
    report("timer", t, n)


# --- 1. time per frame --------------------------------------------------------------------------


def measure_frames(board, renderer, n):
    render = renderer.render
    draw = renderer.draw
    show = renderer.show
    for i in range(20):  # warm-up
        render(board, i * FRAME_STEP_MS)
    t_render = samples(n)
    t_draw = samples(n)
    t_show = samples(n)
    gc.collect()
    for i in range(n):
        t = i * FRAME_STEP_MS
        t0 = ticks_us()
        render(board, t)
        t_render[i] = ticks_diff(ticks_us(), t0)
    for i in range(n):
        t = i * FRAME_STEP_MS
        t0 = ticks_us()
        draw(board, t)
        t1 = ticks_us()
        show()
        t_show[i] = ticks_diff(ticks_us(), t1)
        t_draw[i] = ticks_diff(t1, t0)
    report("render", t_render, n)
    report("draw", t_draw, n)
    report("show", t_show, n)
    emit(
        "frame_lit", sum(1 for h in range(HOLES) if renderer.frame[3 * h : 3 * h + 3] != b"\0\0\0")
    )
    emit("frame_estimated_ma", renderer.estimated_ma, renderer.scale)


# --- 2. time per score ------------------------------------------------------------------------


def measure_scores(n):
    board = GameState()
    t_peg = samples(n)
    t_undo = samples(n // UNDO_EVERY + 1)
    undos = 0
    games = 0
    gc.collect()
    for i in range(n):
        if board.winner != NO_WINNER:
            board.new_game()  # not timed
            games += 1
        t0 = ticks_us()
        board.peg(i & 1, 1 + i % 12)
        t_peg[i] = ticks_diff(ticks_us(), t0)
        if i % UNDO_EVERY == UNDO_EVERY - 1:
            t0 = ticks_us()
            board.undo()
            t_undo[undos] = ticks_diff(ticks_us(), t0)
            undos += 1
    report("peg", t_peg, n)
    report("undo", t_undo, undos)
    emit("score_games", games)


# --- 3. allocation per operation (gc disabled, mem_alloc before/after) ------------------------


def alloc_loop_baseline(n):
    board = GameState()
    gc.collect()
    gc.disable()
    a = mem_alloc()
    for i in range(n):
        _t = i * FRAME_STEP_MS
        if board.winner != NO_WINNER:
            pass
    b = mem_alloc()
    gc.enable()
    return b - a


def measure_alloc_frames(board, renderer, n):
    render = renderer.render
    base = alloc_loop_baseline(n)
    gc.collect()
    gc.disable()
    a = mem_alloc()
    for i in range(n):
        render(board, i * FRAME_STEP_MS)
    b = mem_alloc()
    gc.enable()
    emit("alloc_render", n, b - a - base, base)


def measure_alloc_scores(n):
    board = GameState()
    base = alloc_loop_baseline(n)
    gc.collect()
    gc.disable()
    a = mem_alloc()
    for i in range(n):
        if board.winner != NO_WINNER:
            board.new_game()
        board.peg(i & 1, 1 + i % 12)
        if i % UNDO_EVERY == UNDO_EVERY - 1:
            board.undo()
    b = mem_alloc()
    gc.enable()
    emit("alloc_score", n, b - a - base, base)


def main():
    emit(
        "version",
        sys.implementation.version[0],
        sys.implementation.version[1],
        sys.implementation.version[2],
    )
    emit("word_bytes", 8 if sys.maxsize > 2**32 else 4)
    board, renderer = measure_objects()
    measure_timer_overhead(1000)
    measure_frames(board, renderer, FRAMES)
    measure_scores(SCORES)
    measure_alloc_frames(board, renderer, FRAMES)
    measure_alloc_scores(SCORES)
    emit("done")


main()
