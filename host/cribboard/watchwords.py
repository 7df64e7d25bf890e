"""What `cribboard watch` prints: each event a board pushes, as a person reads it. A state event
is told by what changed since the last one (a peg, a pending count, the deal, an undo, a
new game, the win), not by its protocol fields; `watch --raw` prints those."""

from __future__ import annotations

from collections.abc import Callable

from cribboard.api import (
    AdmitEvent,
    Board,
    BoardEvent,
    BoardState,
    ButtonEvent,
    HelloEvent,
    LinkEvent,
    RestoredEvent,
    SettingsEvent,
    StateEvent,
)
from cribboard.i18n import N_, _, n_
from cribboard.names import player_name
from cribboard.terminal import describe_match, describe_state

_WINS = {
    "won": N_("%(player)s wins with %(score)d"),
    "skunk": N_("%(player)s wins with %(score)d, a skunk"),
    "double_skunk": N_("%(player)s wins with %(score)d, a double skunk"),
}
_LINK = {
    "lost": N_("the link to the board is lost: reconnecting…"),
    "back": N_("the link to the board is back"),
    "gone": N_("the board did not come back: the link is given up"),
}
_BUTTONS = {
    "tap": N_("the %(button)s button on the board was tapped"),
    "hold": N_("the %(button)s button on the board was held"),
}


def _undone(before: BoardState, after: BoardState) -> list[str]:
    """What an undo took back: each player whose score it moved, from where to where (the
    scores after alone read as if every player's were taken back)."""
    moved = [p for p in range(after.players) if after.front[p] != before.front[p]]
    if not moved:
        return [_("undone: the last change")]
    return [
        _(
            "undone: %(player)s back from %(before)d to %(score)d",
            player=player_name(p),
            before=before.front[p],
            score=after.front[p],
        )
        for p in moved
    ]


def restored_line(fields: dict[str, str]) -> str:
    """One line for the player: the board came back from a power cut older than this host saw,
    and what the host put back (the client's `restored` event, cribboard.client.RESTORED)."""
    if fields.get("unknown"):
        return _("the board came back at a game this program never saw: check the score")
    lost = int(fields["lost"]) if fields.get("lost", "").isdigit() else 0
    back = int(fields["back"]) if fields.get("back", "").isdigit() else 0
    if back == lost:
        return n_(
            "the board came back from a power cut without %(count)d change made here: put back",
            "the board came back from a power cut without %(count)d changes made here: put back",
            lost,
        )
    return n_(
        "the board came back from a power cut without %(count)d change made here: %(back)d put "
        "back, the rest refused: check the score",
        "the board came back from a power cut without %(count)d changes made here: %(back)d put "
        "back, the rest refused: check the score",
        lost,
        back=back,
    )


def tell_restored(board: Board, say: Callable[[str], None]) -> Callable[[], None]:
    """Have `say` tell the player, in one line, each time the library put back what a power
    cut of `board` took (for `keep`, `play`, a remote game); returns the unsubscribe."""

    def told(event: BoardEvent) -> None:
        if isinstance(event, RestoredEvent):
            say(restored_line(event.fields))

    return board.subscribe(told)


def _scores(state: BoardState) -> str:
    return ", ".join(f"{player_name(p)} {state.front[p]}" for p in range(state.players))


class ChangeTeller:
    """Turns a board's events into sentences; keeps the last state to tell what changed."""

    def __init__(self) -> None:
        self.last: BoardState | None = None

    def tell(self, event: BoardEvent) -> list[str]:
        """The lines to print for `event` (none for an event that changes nothing seen)."""
        if isinstance(event, StateEvent):
            before, self.last = self.last, event.state
            if before is None:
                return describe_state(event.state).splitlines()
            return changes(before, event.state)
        if isinstance(event, SettingsEvent):
            return [
                _(
                    "brightness %(bright)s, the LEDs at most %(budget)s mA",
                    bright=event.settings.brightness,
                    budget=event.settings.budget,
                )
            ]
        if isinstance(event, ButtonEvent):
            text = _BUTTONS.get(event.action, _BUTTONS["tap"])
            return [_(text, button=event.name)]
        if isinstance(event, HelloEvent):
            return [
                _(
                    "the board (re)started: firmware %(firmware)s",
                    firmware=event.fields.get("fw", "?"),
                )
            ]
        if isinstance(event, AdmitEvent):
            if event.admission.open:
                return [_("Bluetooth: every device may change the board (open mode)")]
            return [
                n_(
                    "Bluetooth: %(count)d device admitted may change the board",
                    "Bluetooth: %(count)d devices admitted may change the board",
                    event.admission.admitted,
                )
            ]
        if isinstance(event, LinkEvent):
            return [_(_LINK.get(event.state, _LINK["lost"]))]
        if isinstance(event, RestoredEvent):
            return [restored_line(event.fields)]
        return []


def changes(before: BoardState, after: BoardState) -> list[str]:
    """What a person sees change between two states of a board, in sentences: the game's,
    then the match's (protocol 1.4: started, its next game, won, ended)."""
    lines = _game_changes(before._replace(match_length=0), after._replace(match_length=0))
    was, now = before.match, after.match
    if after.rev == before.rev or (was is None and now is None):
        return lines
    if now is None:
        return [*lines, _("no more match play")]
    told = describe_match(after)
    if told is not None and (
        was is None
        or (now.number, now.game) != (was.number, was.game)
        or (now.winner is not None and was.winner is None)
    ):
        lines.append(told)
    return lines


def _game_changes(before: BoardState, after: BoardState) -> list[str]:
    """What a person sees change in the game between two states of a board, in sentences."""
    if after.rev == before.rev:
        return []
    # An undo first: one back to nothing pegged looks like a new game, but a new game is one
    # more change to undo, not one fewer.
    undone = after.undo < before.undo
    if (after.target, after.players) != (before.target, before.players) or (
        not undone
        and not any(after.front)
        and not any(after.back)
        and (any(before.front) or any(before.back))
    ):
        return [_("new game: %(game)s", game=describe_state(after).splitlines()[0])]
    lines: list[str] = []
    if undone:
        lines.extend(_undone(before, after))
    else:
        for p in range(after.players):
            name = player_name(p)
            front, back = after.front[p], after.back[p]
            if (front, back) == (before.front[p], before.back[p]):
                continue
            if back == before.front[p] and front > back:
                lines.append(
                    _(
                        "%(player)s pegs %(points)d: %(score)d",
                        player=name,
                        points=front - back,
                        score=front,
                    )
                )
            else:
                lines.append(
                    _(
                        "%(player)s's pegs set: %(score)d (back %(back)d)",
                        player=name,
                        score=front,
                        back=back,
                    )
                )
    for p in range(after.players):
        if after.pending[p] != before.pending[p]:
            lines.append(
                _(
                    "%(player)s: %(points)d pending",
                    player=player_name(p),
                    points=after.pending[p],
                )
                if after.pending[p]
                else _("%(player)s: nothing pending", player=player_name(p))
            )
    if after.dealer != before.dealer:
        lines.append(_("%(player)s deals", player=player_name(after.dealer)))
    if after.winner is not None and after.winner != before.winner:
        lines.append(
            _(
                _WINS.get(after.result, _WINS["won"]),
                player=player_name(after.winner),
                score=after.front[after.winner],
            )
        )
    if after.games != before.games and not lines:
        games = ", ".join(f"{player_name(p)} {after.games[p]}" for p in range(after.players))
        lines.append(_("games won: %(games)s", games=games))
    return lines
