"""`python -m graphmend` is the `graphmend` command."""

import sys

from .cli import main

sys.exit(main())
