"""`python -m cribboard.cli`: the command line."""

import sys

from cribboard.cli import main

sys.exit(main())
