"""``python -m cardkit``: the kit's command (``cardkit.cli``)."""

import sys

from cardkit.cli import main

sys.exit(main())
