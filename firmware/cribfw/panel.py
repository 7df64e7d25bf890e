# The pegging panel: what the board's buttons do. Each player has a "+" and a "-" button; one
# shared "deal" button. A count is entered as a pending count the board previews (the hole the
# peg would reach blinks), then committed as one peg move (one leapfrog).
#
#   P+  press: +1   hold: +5 at once, then +5 every REPEAT_MS (stops at 29)
#   P-  press: -1 from the pending count; hold: cancel the pending count;
#       hold with nothing pending: undo the last committed move (one per hold)
#   deal  press: commit every pending count now; with none pending, pass the deal on;
#         hold NEW_GAME_MS: new game (same target and players)
# A pending count commits by itself COMMIT_MS after its player's last press, or at once when
# another player starts a count or the deal button is pressed. A preview a host shows (`pend`)
# is left to the host: the buttons commit only counts they entered (a host that took one off
# and showed it again before then, as a remote game's end does around the other end's peg,
# leaves it theirs).
#
# Buttons are passed in (name -> Button); names: "A+", "A-", "B+", "B-", "C+", "C-", "deal".
# A board may have fewer (a two-player board has no C buttons).
#
# Waking (the buttons task, cribfw/app.py): `watch` arms the pins' interrupts where they have them;
# `due_in` says when the panel next needs an update (a debounce ending, a hold's next step, a
# pending count's commit), or -1 when every button rests and only an edge can change anything.
#
# Admission (cribfw/admission.py): while a Bluetooth device that was refused waits, a tap of deal
# admits it instead of doing its usual action; the panel asks `admission.take_tap(now)` first.

try:
    import micropython
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

from cribcore.state import MAX_POINTS, GameError
from cribfw.buttons import LONG, NONE, PRESS, REPEAT, TAP
from cribfw.clock import ticks_diff

PLAYER_KEYS = ("A", "B", "C")
ACTION_NAMES = {TAP: b"tap", LONG: b"hold"}


class Panel:
    COMMIT_MS = 2500
    NEW_GAME_MS = 3000

    def __init__(self, board, buttons, on_action=None, admission=None):
        self.board = board
        self.on_action = on_action  # on_action(name_bytes, action_bytes): report to hosts
        self.admission = admission  # asked first on a tap of deal (None: no admission)
        self._plus = [buttons.get(k + "+") for k in PLAYER_KEYS]
        self._minus = [buttons.get(k + "-") for k in PLAYER_KEYS]
        self._deal = buttons.get("deal")
        self._names = {}
        self._buttons = []
        for name in buttons:
            self._names[buttons[name]] = name.encode()
            self._buttons.append(buttons[name])
        self._last_touch = [0, 0, 0]
        # The pending count this panel entered, per player: a preview a host set (or changed)
        # is the host's to commit, never the buttons'.
        self._entered = [0, 0, 0]
        self._new_game_fired = False

    @micropython.native
    def update(self, now):
        """Read every button at time `now` (ms) and act on what happened."""
        # (Runs every few milliseconds while a button is touched: a resting one costs no call,
        # one with nothing to report no further call.)
        board = self.board
        for p in range(3):
            plus = self._plus[p]
            minus = self._minus[p]
            if plus is not None and not plus.resting:
                event = plus.update(now)
                if event != NONE:
                    self._on_plus(p, plus, event, now)
            if minus is not None and not minus.resting:
                event = minus.update(now)
                if event != NONE:
                    self._on_minus(p, minus, event, now)
        deal = self._deal
        if deal is not None and not deal.resting:
            event = deal.update(now)
            if event != NONE:
                self._on_deal(deal, event, now)
        pending = board.pending
        entered = self._entered
        for p in range(board.players):
            if (
                entered[p] != 0
                and ticks_diff(now, self._last_touch[p]) >= self.COMMIT_MS
                and not self._held(p)
            ):
                if pending[p] == entered[p]:  # (as _mine)
                    self._commit(p)
                else:  # a host took the count off or changed it: the host's now
                    entered[p] = 0

    def irq_in_task(self):
        """Whether the pins call their IRQ handlers from inside a task (see Button)."""
        for button in self._buttons:
            if not button.irq_in_task():
                return False
        return len(self._buttons) > 0

    def watch(self, wake, clock=None, sleep=None):
        """Arm every button's pin to set `wake` on its edges; True if all of them could be
        (the panel may then sleep while `due_in` is -1), False if some must be polled.
        `clock` and `sleep`: microseconds, as Button.watch takes them."""
        every = True
        for button in self._buttons:
            if not button.watch(wake, clock, sleep):
                every = False
        return every

    @micropython.native
    def due_in(self, now):
        """Milliseconds until the next update is due at the latest; -1 when nothing is due
        until a button's edge (every button rests, no count of the buttons waits to commit)."""
        due = -1
        for button in self._buttons:
            if button.resting:
                continue
            wait = button.due_in(now)
            if wait >= 0 and (due < 0 or wait < due):
                due = wait
        entered = self._entered
        for p in range(self.board.players):
            # A count the buttons entered is due COMMIT_MS after the last press even when a host
            # took it off meanwhile: a host that moved the pegs shows it again at once (a remote
            # game's end does), and no edge would wake the panel to commit it then.
            if entered[p] != 0 and not self._held(p):
                # (a held button is due by itself; the count commits after its release)
                wait = self.COMMIT_MS - ticks_diff(now, self._last_touch[p])
                if wait < 0:
                    wait = 0
                if due < 0 or wait < due:
                    due = wait
        return due

    # --- per button ----------------------------------------------------------------------------

    # (A press reaches the LEDs after these: each call saved on its way counts.)

    def _on_plus(self, p, button, event, now):
        if event == NONE or p >= self.board.players:
            return
        if event == TAP or event == LONG:
            self._report(button, event)
        self._last_touch[p] = now
        if event == PRESS:
            pending = self.board.pending
            entered = self._entered
            for other in range(self.board.players):
                if other != p and pending[other] != 0 and pending[other] == entered[other]:
                    self._commit(other)  # (as _mine)
            self._add(p, 1)
        elif event == LONG:
            self._add(p, 4)  # the press already counted one: five in all
        elif event == REPEAT:
            self._add(p, 5)

    def _on_minus(self, p, button, event, now):
        if event == NONE or p >= self.board.players:
            return
        if event == TAP or event == LONG:
            self._report(button, event)
        self._last_touch[p] = now
        board = self.board
        pending = board.pending[p]
        if event == TAP and pending:
            self._set(p, pending - 1)
        elif event == LONG:
            if pending:
                self._set(p, 0)  # a mistaken count, cancelled
            else:
                try:
                    board.undo()
                except GameError:
                    pass  # nothing to undo: the hold does nothing

    def _on_deal(self, button, event, now):
        if event == NONE:
            return
        if event == TAP or event == LONG:
            self._report(button, event)
        board = self.board
        if event == PRESS:
            self._new_game_fired = False
        elif event == TAP:
            if self.admission is not None and self.admission.take_tap(now):
                return  # the tap admitted a Bluetooth device: nothing else
            if not self._commit_all():
                board.next_dealer()
        elif not self._new_game_fired and button.held_ms(now) >= self.NEW_GAME_MS:
            self._new_game_fired = True  # one new game per hold, however long
            board.new_game()

    # --- helpers -------------------------------------------------------------------------------
    # A button cannot be refused with an error reply: a press the rules refuse (scoring after
    # the game ended, undo with no history) simply does nothing. Each call is tried where it is
    # made (a helper taking the call and its arguments would allocate them on every press).

    def _add(self, p, points):
        count = self.board.pending[p] + points
        if count > MAX_POINTS:
            count = MAX_POINTS
        try:
            self.board.set_pending(p, count)
        except GameError:
            return
        self._entered[p] = count

    def _set(self, p, count):
        try:
            self.board.set_pending(p, count)
        except GameError:
            return
        self._entered[p] = count

    def _mine(self, p):
        pending = self.board.pending[p]
        return pending != 0 and pending == self._entered[p]

    def _commit(self, p):
        if not self._mine(p):
            return False
        points = self._entered[p]
        self._entered[p] = 0
        try:
            self.board.peg(p, points)
        except GameError:
            self.board.set_pending(p, 0)
        return True

    def _commit_all(self):
        committed = False
        for p in range(self.board.players):
            if self._commit(p):
                committed = True
        return committed

    @micropython.native
    def _held(self, p):
        plus = self._plus[p]
        minus = self._minus[p]
        return (plus is not None and plus.down) or (minus is not None and minus.down)

    def _report(self, button, event):
        action = ACTION_NAMES.get(event)
        if action is not None and self.on_action is not None:
            self.on_action(self._names[button], action)
