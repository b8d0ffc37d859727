"""``python -m skinning``: see :mod:`skinning.cli`."""
import sys

from .cli import main

sys.exit(main())
