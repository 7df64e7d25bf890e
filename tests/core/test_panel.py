# Buttons and the pegging panel, with fake pins and a fake clock: run under CPython (pytest) and
# MicroPython (mprun.py).
from cribcore.state import GameState
from cribfw import buttons as B
from cribfw.buttons import Button
from cribfw.panel import Panel

STEP_MS = 5  # the firmware reads the buttons every 5 ms


class FakePin:
    """A pull-up input: reads 1 until pressed."""

    def __init__(self):
        self.level = 1

    def value(self):
        return self.level


class Rig:
    def __init__(self, board=None, names=("A+", "A-", "B+", "B-", "C+", "C-", "deal")):
        self.board = board or GameState()
        self.pins = {}
        buttons = {}
        for name in names:
            self.pins[name] = FakePin()
            buttons[name] = Button(self.pins[name])
        self.actions = []
        self.panel = Panel(self.board, buttons, lambda n, a: self.actions.append((n, a)))
        self.now = 1000

    def wait(self, ms):
        end = self.now + ms
        while self.now < end:
            self.now += STEP_MS
            self.panel.update(self.now)

    def press(self, name, ms=80, gap=80):
        self.pins[name].level = 0
        self.wait(ms)
        self.pins[name].level = 1
        self.wait(gap)

    def taps(self, name, count):
        for _ in range(count):
            self.press(name)


def test_button_debounces_and_reports_events():
    pin = FakePin()
    button = Button(pin)
    events = []
    now = 0
    # contact bounce: flickers shorter than the debounce time are ignored
    for level in (0, 1, 0, 1, 0, 1):
        pin.level = level
        now += 5
        events.append(button.update(now))
    assert [e for e in events if e != B.NONE] == []
    pin.level = 0
    for _ in range(10):
        now += 5
        events.append(button.update(now))
    assert events.count(B.PRESS) == 1 and button.down
    pin.level = 1
    for _ in range(10):
        now += 5
        events.append(button.update(now))
    assert events.count(B.TAP) == 1 and not button.down


def test_hold_gives_long_then_repeats():
    pin = FakePin()
    button = Button(pin)
    pin.level = 0
    events = []
    for t in range(0, 2000, 5):
        events.append(button.update(t))
    assert events.count(B.PRESS) == 1 and events.count(B.LONG) == 1
    assert (
        events.count(B.REPEAT) == (2000 - Button.DEBOUNCE_MS - Button.LONG_MS) // Button.REPEAT_MS
    )
    pin.level = 1
    for t in range(2000, 2100, 5):
        events.append(button.update(t))
    assert events.count(B.RELEASE) == 1 and events.count(B.TAP) == 0


def test_taps_preview_then_commit_after_a_pause():
    rig = Rig()
    rig.taps("A+", 3)
    assert rig.board.pending[0] == 3 and rig.board.front[0] == 0
    rig.wait(Panel.COMMIT_MS)
    assert rig.board.front[0] == 3 and rig.board.pending[0] == 0
    assert rig.board.undo_count == 1  # one move, one leapfrog


def test_twelve_and_twenty_nine_are_quick():
    rig = Rig()
    # 12: hold "+" until the preview shows 10, then two taps
    rig.pins["A+"].level = 0
    rig.wait(Button.DEBOUNCE_MS + Button.LONG_MS + Button.REPEAT_MS)
    rig.pins["A+"].level = 1
    rig.wait(60)
    assert rig.board.pending[0] == 10
    rig.taps("A+", 2)
    assert rig.board.pending[0] == 12
    rig.press("deal")  # confirm at once
    assert rig.board.front[0] == 12
    # 29: one hold until the preview stops at 29
    rig.pins["B+"].level = 0
    rig.wait(Button.DEBOUNCE_MS + Button.LONG_MS + 5 * Button.REPEAT_MS)
    rig.pins["B+"].level = 1
    rig.wait(60)
    assert rig.board.pending[1] == 29
    rig.wait(Panel.COMMIT_MS)
    assert rig.board.front[1] == 29


def test_minus_corrects_and_cancels_a_pending_count():
    rig = Rig()
    rig.taps("A+", 4)
    rig.taps("A-", 1)
    assert rig.board.pending[0] == 3
    rig.press("A-", ms=Button.LONG_MS + 50)  # hold: cancel
    assert rig.board.pending[0] == 0
    rig.wait(Panel.COMMIT_MS * 2)
    assert rig.board.front[0] == 0 and rig.board.undo_count == 0


def test_hold_minus_undoes_one_move_per_hold():
    rig = Rig()
    rig.board.peg(0, 5)
    rig.board.peg(0, 7)
    rig.taps("A-", 2)  # taps with nothing pending do nothing
    assert rig.board.front[0] == 12
    rig.press("A-", ms=Button.LONG_MS + 500)  # a long hold is still one undo
    assert (rig.board.front[0], rig.board.back[0]) == (5, 0)
    rig.press("A-", ms=Button.LONG_MS + 50)
    assert rig.board.front[0] == 0


def test_another_players_count_commits_the_first():
    rig = Rig()
    rig.taps("A+", 2)
    rig.taps("B+", 1)
    assert rig.board.front[0] == 2 and rig.board.pending[1] == 1


def test_deal_button_passes_the_deal_and_commits():
    rig = Rig()
    assert rig.board.dealer == 0
    rig.press("deal")
    assert rig.board.dealer == 1
    rig.taps("B+", 6)
    rig.press("deal")  # commits instead of passing the deal
    assert rig.board.front[1] == 6 and rig.board.dealer == 1


def test_new_game_needs_a_deliberate_hold():
    rig = Rig()
    rig.board.peg(0, 10)
    rig.press("deal", ms=Panel.NEW_GAME_MS - 500)  # let go too early: nothing at all
    assert rig.board.front[0] == 10 and rig.board.dealer == 0
    rig.press("deal", ms=Panel.NEW_GAME_MS + 2000)  # held on: still one new game
    assert rig.board.front[0] == 0 and rig.board.undo_count == 2
    rig.board.undo()  # and it can be undone
    assert rig.board.front[0] == 10


def test_after_the_game_ends_plus_does_nothing():
    rig = Rig()
    rig.board.set_pegs(0, 119, 110)
    rig.taps("A+", 2)
    rig.wait(Panel.COMMIT_MS)
    assert rig.board.winner == 0
    rig.taps("B+", 3)
    rig.wait(Panel.COMMIT_MS)
    assert rig.board.front[1] == 0 and rig.board.pending[1] == 0
    rig.press("A-", ms=Button.LONG_MS + 50)  # undo the winning move
    assert rig.board.winner == -1 and rig.board.front[0] == 119


def test_third_players_buttons_only_in_a_three_player_game():
    rig = Rig()
    rig.taps("C+", 3)
    rig.wait(Panel.COMMIT_MS)
    assert rig.board.rev == 0
    rig.board.new_game(121, 3)
    rig.taps("C+", 3)
    rig.wait(Panel.COMMIT_MS)
    assert rig.board.front[2] == 3


def test_actions_are_reported():
    rig = Rig()
    rig.taps("A+", 1)
    rig.press("deal", ms=Button.LONG_MS + 50)
    assert (b"A+", b"tap") in rig.actions and (b"deal", b"hold") in rig.actions


def test_a_hosts_preview_is_not_committed_by_the_buttons():
    rig = Rig()
    rig.board.set_pending(1, 6)  # a host previews a count
    rig.wait(Panel.COMMIT_MS * 2)
    rig.press("deal")
    assert rig.board.pending[1] == 6 and rig.board.front[1] == 0
    rig.taps("B+", 1)  # a player adds to it: now it is the panel's count
    assert rig.board.pending[1] == 7
    rig.wait(Panel.COMMIT_MS)
    assert rig.board.front[1] == 7
