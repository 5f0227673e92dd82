"""``python -m jaxkit.docking dock|train ...`` (see :mod:`jaxkit.docking._cli`)."""

import sys

from ._cli import main

sys.exit(main())
