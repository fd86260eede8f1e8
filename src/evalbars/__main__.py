"""``python -m evalbars``: the command line (``evalbars``)."""

import sys

from evalbars.cli import main

sys.exit(main())
