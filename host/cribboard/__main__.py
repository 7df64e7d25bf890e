"""`python -m cribboard`: the command line, as the `cribboard` command."""

import sys

from cribboard.cli import main

sys.exit(main())
