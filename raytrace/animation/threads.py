"""The kernels' thread count inside a render-farm task.

Kept apart from :mod:`raytrace.animation.farm` on purpose: the kernel cache's folder is
named after a hash of every package file that mentions the JIT compiler's module (see
:mod:`raytrace._numba_cache`), so the farm's pure-Python code can change without
throwing the compiled kernels away.
"""


def limit_threads(threads):
    """Numba's thread count for this thread (it is per calling thread), at most the
    process's pool; nothing for ``None`` or 0."""
    if threads:
        import numba
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
