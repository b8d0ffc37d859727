"""``python -m curves``: see ``curves.cli``."""
import sys

from .cli import main

sys.exit(main())
