"""Keep Numba's on-disk cache in step with the whole package's source and switches.

Numba invalidates a cached kernel only when *its own* file changes; a kernel that inlines
a function from another file (the BVH traversal, the intersection routines) would keep
running the old code after that file changed. So the cache lives in a folder named after
a hash of every ``.py`` file of the package that uses Numba: any edit of such a file
starts a fresh folder (kernels only see code and constants of modules that use Numba:
``raytrace/layout.py``, the kernels, ``accel``, ``shapes``, ``textures``, ``cubemap``).

Two environment switches choose between implementations at compile time, which Numba's
cache does not record either, so the folder name carries them too (a kernel compiled
with the plain-loop traversal is never loaded where the SIMD one is asked for, and back):

- ``RAYTRACE_SIMD=0``: the BVH traversal uses plain loops instead of the LLVM IR SIMD
  kernels (``raytrace.accel.simd``; same results, slower);
- ``RAYTRACE_BORROW=0``: ``raytrace.kernels.borrow.borrow`` is the identity (same
  results, slower: Numba reference-counts every array again).

Both default to 1 (on); ``0``, ``off``, ``false``, ``no`` turn them off. Numba's own
``NUMBA_BOUNDSCHECK=1`` (bounds-checked kernels, used by ``tests/test_boundscheck.py``)
gets a folder of its own as well.

The base folder is ``$NUMBA_CACHE_DIR`` when set, else ``~/.cache/raytrace-numba`` (a
per-user folder in the temporary directory when that is not writable). Older folders
beyond the newest few are removed (``userio.numba_cache``, which gives ``curves``,
``skinning`` and ``particles`` content-keyed folders of their own the same way).
"""
import os

from userio import numba_cache
from userio.numba_cache import switch_on   # the kernels read their switches through here

SWITCHES = {"RAYTRACE_SIMD": "simd", "RAYTRACE_BORROW": "borrow"}   # variable -> tag


def mode_tag():
    """The switches as a folder-name part, e.g. ``simd-borrow`` or ``nosimd-borrow``;
    ``-boundscheck`` is added under ``NUMBA_BOUNDSCHECK=1`` (Numba's cache does not record
    it either: a kernel compiled without bounds checks would be loaded silently)."""
    tag = "-".join(tag if switch_on(name) else "no" + tag for name, tag in SWITCHES.items())
    if os.environ.get("NUMBA_BOUNDSCHECK", "").strip() not in ("", "0"):
        tag += "-boundscheck"
    return tag


def source_hash(package_dir):
    """A hash of every ``.py`` file of the package that uses Numba, and of ``layout.py``
    (the files a compiled kernel can inline code or constants from: ``layout.py`` holds the
    kernels' constants but imports no Numba itself, so that ``--help`` stays light); editing
    the pure-Python rest (the CLI, the grading tools, ...) keeps the compiled kernels."""
    return numba_cache.source_hash(package_dir, only_numba_files=True, also=("layout.py",))


def folder_parts(package_dir):
    """(name, digest, tag) of raytrace's cache folder (``userio.numba_cache.make_folder``)."""
    return "raytrace", source_hash(package_dir), mode_tag()


def configure(package_dir):
    """Point numba's cache at ``<base>/raytrace-<source hash>-<mode tag>``, compile for the
    portable CPU level where the host has it and copy in the shipped kernels when they fit
    (``userio.numba_cache.open_folder``); call before any @njit(cache=True) kernel is
    decorated. Returns the folder (None when no
    base is writable: numba then uses its own default places, which know neither)."""
    return numba_cache.open_folder(package_dir, *folder_parts(package_dir))
