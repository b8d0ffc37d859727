"""``python -m curves``: see ``curves.cli``."""
import sys

from userio.cli import run


def _main():
    from .cli import main        # imported here: Ctrl-C while importing also exits 130
    return main()


sys.exit(run("curves", _main))
