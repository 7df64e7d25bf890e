"""Playing and scoring games on a board.

* `driver.GameDriver`: plays a game of the rules engine with `Player`s and pegs every score on a
  board through the library (`cribboard play`: you against the computer; `cribboard demo`).
* `players`: the `Player` interface, `Computer` (expected-value discards, careful pegging) and
  `HumanTerminal` (a person typing).
* `scorekeeper.Scorekeeper`: the table app for games played with real cards (`cribboard keep`,
  `make run`): the keys, the words and the board's I/O around `rules.scorekeeping`, the game
  model (show order, the deal, claims, muggins, undo) it keeps; `tablefile` keeps where the
  table is in its deal for the next run.
* `boards`: which board to play on (the saved virtual board when none is found: its game
  outlives the app), and that one app keeps a board's game at a time.
* `outside`: the changes made to the board elsewhere (its buttons, another program, a phone),
  which both apps draw and say at once.
"""
