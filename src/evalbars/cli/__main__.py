"""``python -m evalbars.cli``: the command line."""

import sys

from evalbars.cli import main

sys.exit(main())
