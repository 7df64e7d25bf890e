# What happens between games on a board: a new game, a match started or ended, and undoing
# them: the board's number for its game, the match (best of N or first to N, the tally's games
# towards it, which game is on), and the history of finished games (cribcore/history.py). Pure
# logic on a cribcore.state.GameState, whose methods (new_game, start_match, end_match, undo)
# load this module the first time one of them needs it, their arguments checked: a small
# board's heap keeps the room until a game ends there. Runs on MicroPython and CPython.
#
# The undo step of a new game or a match started or ended keeps what undoing it puts back above
# the bits of its row's players (2 bits: 2 or 3) and award (2 bits: 0..2), which every other
# step writes plain (GameState.save_step): in the players word, from bit 2 the step's kind
# (STEP_*), from bit FORM_SHIFT the match's form before it (kind << 4 | length); in the award
# word, from bit 2, which game of the match was going on before it (at most 8191).

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


from cribcore.limits import MATCH_BEST_OF, MATCH_FIRST_TO, MATCH_MOST, MAX_PLAYERS

STEP_NEW_GAME = const(1)  # the game number went up by one
STEP_NEW_MATCH = const(2)  # the match number went up by one
STEP_MATCH = const(4)  # the match's form and game changed
FORM_SHIFT = const(5)


def match_form_ok(kind, length):
    """Whether a match of `length` of `kind` (limits' MATCH_*) is one a board plays: best of 3,
    5, .., 15, first to 2..15."""
    if kind == MATCH_BEST_OF:
        return 3 <= length <= MATCH_MOST and length % 2 == 1
    return kind == MATCH_FIRST_TO and 2 <= length <= MATCH_MOST


def wins_needed(kind, length):
    """The games a player must win to take a match of `length` of `kind`."""
    return length if kind == MATCH_FIRST_TO else length // 2 + 1


def match_winner(game):
    """The player who has won the match on `game` (their games-won tally reached what it
    needs), or -1: none yet, or no match."""
    if not game.match_len:
        return -1
    need = wins_needed(game.match_kind, game.match_len)
    for p in range(game.players):
        if game.games[p] >= need:
            return p
    return -1


def new_game(game, target, players):
    """GameState.new_game (`target` and `players` checked): the next game of a match, or the
    next match once it is won (or the player count changes)."""
    new_match = game.match_len and (players != game.players or match_winner(game) >= 0)
    _begin(game, target, players, new_match, game.match_kind, game.match_len)


def start_match(game, kind, length):
    """GameState.start_match (the form checked)."""
    _begin(game, game.target, game.players, True, kind, length)


def end_match(game):
    """GameState.end_match."""
    if not game.match_len:
        return
    _save_step(game, STEP_MATCH)
    game.match_len = 0
    game.match_kind = 0
    game.match_game = 0
    game.rev += 1


def _begin(game, target, players, new_match, kind, length):
    """A new game of `target` and `players` (checked), in a new match of `kind` and `length`
    when `new_match`: one undo step. A won game the board leaves is final from now on: into
    the history."""
    history = game.history
    if game.winner >= 0 and history is not None:
        history.add(game, history.won_at if history.won_at >= 0 else history.life())
        history.won_at = -1
    step = STEP_NEW_GAME
    if new_match:
        step |= STEP_NEW_MATCH | STEP_MATCH
    elif game.match_len:
        step |= STEP_MATCH
    _save_step(game, step)
    if players != game.players or new_match:
        for p in range(MAX_PLAYERS):
            game.games[p] = 0
    if players != game.players:
        game.dealer = 0
    elif game.winner >= 0 and players == 2:
        game.dealer = 1 - game.winner
    else:
        game.dealer = (game.dealer + 1) % players
    game.players = players
    game.target = target
    for p in range(MAX_PLAYERS):
        game.front[p] = 0
        game.back[p] = 0
        game.pending[p] = 0
    game.winner = -1
    game.award = 0
    game.game_no += 1
    if new_match:
        game.match_no += 1
        game.match_kind = kind
        game.match_len = length
        game.match_game = 1
    elif game.match_len:
        game.match_game += 1
    game.rev += 1


def _save_step(game, step):
    """The undo step of a change of kind `step` (STEP_*), before it: what undoing it puts back,
    with the players and the award (see the top)."""
    form = game.match_kind << 4 | game.match_len if game.match_len else 0
    game.save_step(
        game.players | step << 2 | form << FORM_SHIFT, game.award | min(game.match_game, 8191) << 2
    )


def undo_step(game, players, award):
    """Undo of a step that started a game or changed the match: what it changed beyond the
    pegs, from its row's players and award words (see cribcore.state's SNAPSHOT_LEN); the
    pegs, the tally and the rest are back already."""
    step = players >> 2
    history = game.history
    if step & STEP_NEW_GAME:
        game.game_no -= 1
        if game.winner >= 0 and history is not None:
            # The won game it left is on the board again: out of the history (it is not final
            # any more), with the time it was won.
            history.won_at = history.take_back(game.game_no)
    if step & STEP_NEW_MATCH:
        game.match_no -= 1
    if step & STEP_MATCH:
        form = players >> FORM_SHIFT
        game.match_kind = form >> 4
        game.match_len = form & 15
        game.match_game = award >> 2
