"""The command line's plumbing, below every feature that has commands: the command rows' parts
(:mod:`cribboard.cmdline.rows`: a command is a row; the one `UsageError`) and the argument
parser whose bad argument is one line (:mod:`cribboard.cmdline.parser`). The commands themselves
are rows in :mod:`cribboard.cli` and in the features' own ``cli`` modules."""
