"""The kernels' thread count inside a render-farm task.

A module of its own: the farm's tasks import it without the farm's Dask machinery.
"""


def limit_threads(threads):
    """Numba's thread count for this thread (it is per calling thread), at most the
    process's pool; nothing for ``None`` or 0."""
    if threads:
        import numba
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
