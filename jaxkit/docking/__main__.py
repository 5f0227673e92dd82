"""``python -m jaxkit.docking dock|train ...`` (``python -m jaxkit.docking --help``)."""

import sys

from ._cli import main

sys.exit(main())
