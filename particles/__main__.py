"""``python -m particles``: see :mod:`particles.cli`."""
import sys

from .cli import main

sys.exit(main())
