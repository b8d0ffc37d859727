"""Run a row kernel on several threads: the image's parallel loop, outside Numba.

A row kernel is an ``@njit(nogil=True)`` function whose first three arguments are
``rows`` (int64 array: image rows in the order to visit them), ``first`` and ``step``: it
renders ``rows[first], rows[first + step], ...``. :func:`run_rows` calls it once per
thread, thread ``t`` of ``T`` with ``first = t, step = T`` (the calling thread takes
``t = 0``), and returns when every thread is done.

Why not ``prange``: for each ``parallel=True`` kernel Numba compiles a gufunc and two
wrappers whose LLVM modules each link the whole row kernel in and optimise and generate
its machine code again. For the path tracer that was 10 s of a 60 s first compile (the
kernel: 28 s), for no gain at run time.

The thread count is ``numba.get_num_threads()`` (what ``--threads`` and
``numba.set_num_threads`` set). Images do not depend on it: each pixel is written by one
thread, and its random numbers depend on (seed, pixel, sample) only.

Ctrl-C while the threads run: the kernels cannot be stopped in the middle of a row, so
:func:`run_rows` lets every thread finish its rows and then raises ``KeyboardInterrupt``;
the call's work is then complete.
"""
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numba
import numpy as np

_pools = {}              # (process id, workers) -> ThreadPoolExecutor
_pools_lock = threading.Lock()


def _pool(workers):
    key = (os.getpid(), workers)     # a forked child must not reuse its parent's threads
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = ThreadPoolExecutor(workers, thread_name_prefix="raytrace-rows")
        return pool


def thread_count(n_rows):
    """Threads :func:`run_rows` uses for ``n_rows`` rows: ``numba.get_num_threads()``, at
    most one per row, at least 1."""
    return max(1, min(numba.get_num_threads(), n_rows))


def run_rows(kernel, rows, *args):
    """``kernel(rows, t, T, *args)`` for t = 0 .. T-1 on T threads (see the module
    docstring); ``rows``: int64 array."""
    rows = np.ascontiguousarray(rows, np.int64)
    n = thread_count(rows.shape[0])
    if n == 1:
        kernel(rows, 0, 1, *args)
        return
    futures = [_pool(n - 1).submit(kernel, rows, t, n, *args) for t in range(1, n)]
    interrupted = False
    try:
        kernel(rows, 0, n, *args)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        interrupted |= _wait_all(futures)     # never leave threads writing after we return
    for future in futures:
        future.result()                       # a kernel's exception, if any
    if interrupted:
        raise KeyboardInterrupt


def _wait_all(futures):
    """Wait for every future, through Ctrl-C; -> whether Ctrl-C came meanwhile."""
    interrupted = False
    while True:
        try:
            wait(futures)
            return interrupted
        except KeyboardInterrupt:
            interrupted = True
