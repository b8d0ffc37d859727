"""The folder of ``raytrace``'s Numba cache: named after the switches that choose code.

Each kernel is found in it by its dependency key (``raytrace/compile/cache.py``: its
own code and its callees', so an edit recompiles what it touched and nothing is stale),
and the folder is ``<base>/raytrace-deps<version>-<mode tag>``. Where that cache cannot
be installed (a Numba release whose internals were not checked, or
``RAYTRACE_DEPENDENCY_CACHE=0``), Numba's own cache is used, which invalidates a kernel
only when *its own* file changes; the folder is then named after a hash of every ``.py``
file of the package that uses Numba (and ``layout.py``), so that any edit starts a fresh
folder and a kernel inlining an edited callee is never loaded stale.

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


def folder_parts(package_dir, dependency_keyed=True):
    """(name, digest, tag) of raytrace's cache folder (``userio.numba_cache.make_folder``):
    the digest is ``deps<version>`` with the dependency-keyed cache, else the source hash."""
    if dependency_keyed:
        from .compile.keys import KEY_VERSION
        return "raytrace", f"deps{KEY_VERSION}", mode_tag()
    return "raytrace", source_hash(package_dir), mode_tag()


def configure(package_dir, dependency_keyed=True):
    """Point numba's cache at the package's folder (:func:`folder_parts`), compile for the
    portable CPU level where the host has it and copy in the shipped kernels when they fit
    (``userio.numba_cache.open_folder``); call before any @njit(cache=True) kernel is
    decorated. Returns the folder (None when no
    base is writable: numba then uses its own default places, which know neither)."""
    return numba_cache.open_folder(package_dir, *folder_parts(package_dir, dependency_keyed))
