"""``python -m tomography``: the same as the ``tomography`` command."""

import sys

from tomography.cli import main

sys.exit(main())
