"""Numba set up for ``raytrace``'s kernels: imported first by every module that defines one.

Numba picks a kernel's cache folder when the kernel is *decorated* (its module imported),
so that folder must be chosen before the first ``@njit(cache=True)`` of the package runs:

- ``compile.cache.install``: each kernel cached under its dependency key (its own code
  and its callees', ``raytrace/compile/``), before any kernel is decorated;
- ``_numba_cache.configure``: ``numba.config.CACHE_DIR`` set to the package's folder
  (named after the switches; after every kernel source where the dependency-keyed cache
  could not be installed), the portable CPU level, the shipped kernels copied in;
- ``_numba_inline.install``: the faster inliner, before anything compiles.

Each kernel module starts with ``import raytrace._numba_setup`` (``tests/test_structure.py``
checks that every module importing Numba does), so ``import raytrace`` itself stays light:
``raytrace --help`` and argument errors never import Numba. Runs once per process.
"""
import pathlib

from . import _numba_cache, _numba_inline
from .compile import cache as _compile_cache

DEPENDENCY_KEYED = _compile_cache.install()[0]
CACHE_FOLDER = _numba_cache.configure(pathlib.Path(__file__).parent, DEPENDENCY_KEYED)   # None: no writable base
_numba_inline.install()
