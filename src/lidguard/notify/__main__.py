"""``python -m lidguard.notify`` = ``lidguard-notify``."""

import sys

from lidguard.notify.cli import main

sys.exit(main())
