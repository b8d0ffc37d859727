"""The environment switches that choose kernel code, and the tag that names them.

Two switches choose between implementations when the kernel modules are imported, which
no dependency key could see from the code alone, so every key carries :func:`mode_tag`
(``raytrace.jit.keys.salt``) and the cache keeps each mode in a folder of its own:

- ``RAYTRACE_SIMD=0``: the BVH traversal uses plain loops instead of the LLVM IR SIMD
  kernels (``raytrace.accel.simd``; same results, slower);
- ``RAYTRACE_BORROW=0``: ``raytrace.kernels.borrow.borrow`` is the identity (same
  results, slower: Numba reference-counts every array again).

Both default to 1 (on); ``0``, ``off``, ``false``, ``no`` turn them off. Numba's own
``NUMBA_BOUNDSCHECK=1`` (bounds-checked kernels, used by ``tests/test_boundscheck.py``)
is part of the tag as well. Other switches read here: ``RAYTRACE_PREBUILT`` (the shipped
kernels), ``RAYTRACE_FAST_INLINE`` (``raytrace.jit.inline``), ``RAYTRACE_DISK_CACHE``
(``0``: kernels stay in memory).
"""
import os
import warnings

SWITCHES = {"RAYTRACE_SIMD": "simd", "RAYTRACE_BORROW": "borrow"}   # variable -> tag
_OFF = ("0", "off", "false", "no")
_ON = ("", "1", "on", "true", "yes")


def switch_on(name):
    """Whether the environment switch ``name`` is on (the default). An unrecognised value
    warns and counts as on."""
    value = os.environ.get(name, "").strip().lower()
    if value in _OFF:
        return False
    if value not in _ON:
        warnings.warn(f"{name}={os.environ[name]!r} not understood (use 0 or 1); using 1",
                      RuntimeWarning, stacklevel=2)
    return True


def mode_tag():
    """The switches as a name part, e.g. ``simd-borrow`` or ``nosimd-borrow``;
    ``-boundscheck`` is added under ``NUMBA_BOUNDSCHECK=1``."""
    tag = "-".join(tag if switch_on(name) else "no" + tag for name, tag in SWITCHES.items())
    if os.environ.get("NUMBA_BOUNDSCHECK", "").strip() not in ("", "0"):
        tag += "-boundscheck"
    return tag
