"""The record of the games played: every game a host drove on a board (`keep`, `play`, the
bridge, a remote game), kept in one SQLite file in the user's data directory, and what people
ask of it (`cribboard history`, the bridge's page).

* `store.Record`: the file. A host tells it each state its board shows (`Record.observe`): the
  board's own pegs are the truth for the points, so a game is one row however often the host or
  the board restarts, a resend or a power cut never counts a peg twice, and an undo takes a peg
  out wherever it was made. What the host knows beyond the pegs (whose hand a peg was, its
  cards, the play's pegs, muggins, the starter, who dealt, the players' names) annotates them
  (`Record.note`, `Record.deal`, `Record.name_seats`). A game from the board's own history comes
  in whole (`Record.add_board_game`), matched with the host's row of the same game.
* `stats`: the statistics (won and lost, head to head, skunks, matches, hands and cribs, pegging,
  muggins) and a finished game's scores deal by deal (its graph).

It needs no board: the host's follower of a board (cribboard.recorder) turns the board's states
into `Seen` values. docs/record.md tells the file's tables and the rules.
"""
