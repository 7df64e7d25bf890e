# MicroPython only (run by mprun.py): rendering a frame and applying a score allocate nothing.
import micropython
from checks import FakePixels

from cribcore.layout import HOLES
from cribcore.render import Renderer
from cribcore.state import GameState


def busy_board():
    b = GameState()
    b.set_pegs(0, 100, 90)  # second lap: the whole track glows, both skunk lines showing
    b.set_pegs(1, 50, 45)
    b.set_pending(1, 7)  # blinking preview
    return b


def test_render_allocates_nothing():
    pixels = FakePixels(HOLES)
    r = Renderer(pixels)
    b = busy_board()
    r.render(b, 0)  # warm up (first calls may intern or cache)
    micropython.heap_lock()
    try:
        for t in range(0, 2000, 50):
            r.render(b, t)
        b.set_pegs(1, 50, 45)
        b.peg(0, 21)  # the winning move: pulse animation from here
        for t in range(0, 2000, 50):
            r.render(b, t)
    finally:
        micropython.heap_unlock()
    assert b.winner == 0


def test_score_and_undo_allocate_nothing():
    b = GameState()
    b.peg(0, 1)
    micropython.heap_lock()
    try:
        for i in range(40):
            b.peg(i % 2, 1 + i % 4)
            b.set_pending(i % 2, 3)
        for _ in range(20):
            b.undo()
        b.next_dealer()
    finally:
        micropython.heap_unlock()
    assert b.undo_count > 0


def test_heap_lock_really_catches_allocation():
    micropython.heap_lock()
    caught = False
    try:
        [1, 2, 3]  # noqa: B018 (the allocation under test)
    except MemoryError:
        caught = True
    finally:
        micropython.heap_unlock()
    assert caught
