"""`python -m cribboard.hardware` (see cribboard.hardware.generate)."""

import sys

from cribboard.hardware.generate import main

sys.exit(main())
