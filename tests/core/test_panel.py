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


def test_a_count_a_host_took_off_and_showed_again_is_still_the_buttons_to_commit():
    # A remote game's end, around the other end's peg of the same player: its `peg` clears the
    # count the buttons entered and its `pend` shows it again. Nothing wakes a sleeping panel
    # then (no edge), so the panel stays due until the count's time, and commits it.
    rig = Rig()
    rig.taps("A+", 2)
    rig.board.peg(0, 5)  # the host's move clears the count...
    assert rig.board.pending[0] == 0
    assert rig.panel.due_in(rig.now) >= 0  # ...and the panel still wakes at the count's time
    rig.board.set_pending(0, 2)  # the host shows it again
    rig.wait(Panel.COMMIT_MS)
    assert (rig.board.front[0], rig.board.back[0], rig.board.pending[0]) == (7, 5, 0)
    assert rig.panel.due_in(rig.now) == -1


def test_a_count_a_host_took_off_for_good_is_forgotten_at_its_time():
    rig = Rig()
    rig.taps("A+", 2)
    rig.board.peg(0, 5)
    rig.wait(Panel.COMMIT_MS)
    assert rig.panel.due_in(rig.now) == -1  # nothing left to wait for
    rig.board.set_pending(0, 2)  # a host's preview of the same points, later: the host's
    rig.wait(Panel.COMMIT_MS * 2)
    assert (rig.board.front[0], rig.board.pending[0]) == (5, 2)


# --- sleeping while the buttons rest: pins with interrupts --------------------------------------


class IrqPin(FakePin):
    """A pull-up input with machine.Pin's irq: the handler is called on each level change (the
    trigger asked for both edges); counts the reads."""

    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self):
        super().__init__()
        self.reads = 0
        self.handler = None

    def irq(self, handler=None, trigger=IRQ_FALLING | IRQ_RISING, hard=False):
        assert trigger == self.IRQ_FALLING | self.IRQ_RISING
        self.handler = handler

    def value(self):
        self.reads += 1
        return self.level

    def set(self, level):
        if level != self.level:
            self.level = level
            if self.handler is not None:
                self.handler(self)


class Flag:
    """What the IRQ handlers set (an asyncio flag on a board)."""

    def __init__(self):
        self.is_set = False

    def set(self):
        self.is_set = True


class Sleeper:
    """The buttons task's schedule (cribfw/app.py buttons_task) on a fake clock: update, then
    sleep until the panel is due (at most BUTTON_MS), or until an edge when every button rests.
    `edges` are the scripted contact changes: (time, name, level)."""

    BUTTON_MS = 5

    def __init__(self, names=("A+", "A-", "B+", "B-", "deal"), pin=IrqPin):
        self.board = GameState()
        self.pins = {}
        buttons = {}
        for name in names:
            self.pins[name] = pin()
            buttons[name] = Button(self.pins[name])
        self.flag = Flag()
        self.panel = Panel(self.board, buttons)
        self.now = 1000
        self.sleeps = self.panel.watch(self.flag, self.clock, self.sleep)
        self.updates = []  # the times the panel was updated
        self.sleeping = []  # (from, to): the stretches slept until an edge

    def clock(self):
        return self.now * 1000  # (microseconds)

    def sleep(self, us):
        # A debounce's last microseconds, waited in the update (in whole ms here: the rig's
        # clock counts them).
        self.now += (us + 999) // 1000

    def run(self, edges, until):
        edges = sorted(edges)
        self._advance(self.now, edges)
        while self.now < until:
            self.flag.is_set = False
            self.panel.update(self.now)
            self.updates.append(self.now)  # (after any wait in it)
            due = self.panel.due_in(self.now)
            if due < 0 and self.sleeps and not self.flag.is_set:
                # asleep until the next edge: nothing runs in between
                wake = edges[0][0] if edges else until
                self.sleeping.append((self.now, wake))
                self._advance(wake, edges)
            elif due < 0 or due > self.BUTTON_MS:
                self._advance(self.now + self.BUTTON_MS, edges)
            else:
                self._advance(self.now + due, edges)

    def _advance(self, to, edges):
        # The contacts change at their own times (their IRQ handlers run then), whatever the
        # task is doing.
        while edges and edges[0][0] <= to:
            self.now, name, level = edges.pop(0)
            self.pins[name].set(level)
        self.now = to

    def reads(self):
        return sum(pin.reads for pin in self.pins.values())


def test_resting_buttons_are_not_read_and_a_press_is_taken_as_its_debounce_ends():
    rig = Sleeper()
    assert rig.sleeps
    rig.run([], 1100)
    before = rig.reads()
    rig.run([], 60000)  # a minute with nobody touching a button
    assert rig.reads() == before and not [t for t in rig.updates if 1100 < t < 60000]
    # A tap of A+ at 60000: the press is taken exactly DEBOUNCE_MS after the contact closed.
    press_at = 60000
    rig.run([(press_at, "A+", 0), (press_at + 80, "A+", 1)], press_at + 200)
    assert rig.board.pending[0] == 1
    debounced = press_at + Button.DEBOUNCE_MS
    assert [t for t in rig.updates if t <= debounced][-5:] == list(
        range(press_at, debounced + 1, 5)
    )
    # ... read every BUTTON_MS or sooner while something goes on, then the count commits
    # COMMIT_MS after the tap (the release, debounced), and the panel sleeps again from then.
    # (The panel counts the tap from the update that took it, which began a millisecond early
    # here to wait for the debounce's end: the rig's clock counts whole ones.)
    committed = press_at + 80 + Button.DEBOUNCE_MS + Panel.COMMIT_MS
    rig.run([], committed - 2)
    assert rig.board.front[0] == 0
    rig.run([], press_at + 5000)
    assert rig.board.front[0] == 1 and rig.board.pending[0] == 0
    assert committed - 1 <= rig.sleeping[-1][0] <= committed
    reads = rig.reads()
    rig.run([], press_at + 60000)
    assert rig.reads() == reads


def test_while_a_button_is_touched_only_it_is_read():
    rig = Sleeper()
    rig.run([], 1100)
    reads = {name: pin.reads for name, pin in rig.pins.items()}
    rig.run([(2000, "B+", 0), (2300, "B+", 1)], 2400)
    for name, pin in rig.pins.items():
        if name != "B+":
            assert pin.reads == reads[name], name
    assert rig.pins["B+"].reads > reads["B+"]


def test_a_bouncing_contact_still_debounces_when_woken_by_edges():
    rig = Sleeper()
    rig.run([], 1100)
    t = 2000
    bounce = [(t, "A+", 0), (t + 3, "A+", 1), (t + 6, "A+", 0), (t + 9, "A+", 1), (t + 12, "A+", 0)]
    release = [(t + 100, "A+", 1), (t + 103, "A+", 0), (t + 106, "A+", 1)]
    # The debounce counts from the contact's last edge (t + 12), not from the read seeing it.
    rig.run(bounce, t + 12 + Button.DEBOUNCE_MS - 1)
    assert rig.board.pending[0] == 0
    rig.run(release, t + 300)
    assert t + 12 + Button.DEBOUNCE_MS in rig.updates
    assert rig.board.pending[0] == 1  # one press, however the contact bounced
    # A flicker shorter than the debounce does nothing at all.
    rig.run([(3000, "B+", 0), (3010, "B+", 1)], 3300)
    assert rig.board.pending[1] == 0


def test_holds_repeat_and_a_long_hold_of_deal_starts_a_new_game_while_asleep_between():
    rig = Sleeper()
    rig.run([], 1100)
    hold = Button.DEBOUNCE_MS + Button.LONG_MS + Button.REPEAT_MS
    rig.run([(2000, "A+", 0), (2000 + hold, "A+", 1)], 2000 + hold + 100)
    assert rig.board.pending[0] == 10  # +1, +4 at LONG, +5 at the first repeat
    rig.run([], 8000)
    assert rig.board.front[0] == 10
    rig.run([(9000, "deal", 0), (9000 + Panel.NEW_GAME_MS + 500, "deal", 1)], 14000)
    assert rig.board.front[0] == 0 and rig.board.undo_count == 2  # a new game, undoable


def test_a_held_button_at_the_start_is_read_at_once():
    rig = Sleeper()
    rig.pins["A+"].level = 0  # held before the panel watched it: no edge will come
    rig.run([], 1000 + Button.DEBOUNCE_MS + 50)
    assert rig.panel._plus[0].down


def test_pins_without_interrupts_are_polled_as_before():
    rig = Sleeper(pin=FakePin)
    assert not rig.sleeps
    rig.run([], 2000)
    assert len(rig.updates) == (2000 - 1000) // Sleeper.BUTTON_MS
    rig.pins["A+"].level = 0
    rig.run([], 2100)
    rig.pins["A+"].level = 1
    rig.run([], 2200)
    assert rig.board.pending[0] == 1


def test_a_debounce_ends_to_the_microsecond_after_the_contacts_last_edge():
    clock = [0]  # microseconds
    slept = []

    def sleep(us):
        slept.append(us)
        clock[0] += us

    pin = IrqPin()
    button = Button(pin)
    assert button.watch(Flag(), lambda: clock[0], sleep)
    assert button.update(0) == B.NONE and button.resting
    clock[0] = 1_300
    pin.set(0)  # the contact closes at 1.3 ms
    clock[0] = 5_000
    assert button.update(5) == B.NONE  # read at 5 ms: the debounce counts from 1.3 ms
    left = Button.DEBOUNCE_MS * 1000 + 1_300 - 5_000
    assert button.due_in(5) == (left - B.WAIT_US + 1000) // 1000
    clock[0] = 20_000
    assert button.due_in(20) == 0  # WAIT_US or less left: due now
    assert button.update(20) == B.PRESS  # read at 21.3 ms, the wait before it
    assert slept == [1_300] and clock[0] == 21_300
