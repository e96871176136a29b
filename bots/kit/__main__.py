"""``python -m bots.kit``: the kit's command (``bots.kit.cli``)."""

import sys

from bots.kit.cli import main

sys.exit(main())
