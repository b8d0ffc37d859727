"""Run a row kernel on several threads: the image's parallel loop, outside Numba.

A row kernel is an ``@njit(nogil=True)`` function whose first two arguments are ``rows``
(int64 array: image rows in the order to hand them out) and ``queue`` (int64 array of
length 1, shared by the threads): it renders rows for as long as :func:`next_row` gives
it one. :func:`run_rows` calls it once per thread (the calling thread is one of them)
with the same queue, and returns when every thread is done. Each row goes to whichever
thread asks next, so a thread slowed down (by another job on its core) takes fewer rows
instead of holding up the pass; a static share per thread left a 2-thread render about
5 % idle at the end of each pass on this project's shared machine.

Why not ``prange``: for each ``parallel=True`` kernel Numba compiles a gufunc and two
wrappers whose LLVM modules each link the whole row kernel in and optimise and generate
its machine code again. For the path tracer that was 10 s of a 60 s first compile (the
kernel: 28 s), for no gain at run time.

The thread count is ``numba.get_num_threads()`` (what ``--threads`` and
``numba.set_num_threads`` set). Images do not depend on it, nor on which thread takes a
row: each pixel is written by one thread, and its random numbers depend on (seed, pixel,
sample) only.

Ctrl-C while the threads run: a kernel cannot be stopped in the middle of its work (the
calling thread sees the interrupt only when its kernel returns, once the queue is
empty), so :func:`run_rows` lets every thread finish its rows and then raises
``KeyboardInterrupt``; the call's work is then complete.
"""
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

from raytrace.jit import helper
import numba
import numpy as np

from raytrace.accel.lowlevel import fetch_add

_pools = {}              # (process id, workers) -> ThreadPoolExecutor
_pools_lock = threading.Lock()


def _pool(workers):
    key = (os.getpid(), workers)     # a forked child must not reuse its parent's threads
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = ThreadPoolExecutor(workers, thread_name_prefix="raytrace-rows")
        return pool


@helper
def next_row(rows, queue):
    """The next row for this thread to render, or -1 when every row is taken."""
    k = fetch_add(queue, 1)
    return rows[k] if k < rows.shape[0] else np.int64(-1)


def written_zeros(shape, dtype=np.float64):
    """A zeroed array whose memory pages are written now, by the calling thread.

    ``np.zeros`` gets its pages from the OS untouched; the first write to each one is a page
    fault, taken inside the row kernels when they fill it. On this project's 2-core
    virtual machine, the 3 MB accumulation buffer of a 256 x 256 path-traced render cost
    its first pass 13-16 ms more on 2 threads (about 50 against 35 ms), 0-8 ms on one;
    zeroed here first, every pass took the same time. Buffers that a render fills in part
    (a band of rows for a render farm) stay ``np.zeros``: there untouched pages cost no
    memory."""
    out = np.empty(shape, dtype)
    out.fill(0)
    return out


def thread_count(n_rows):
    """Threads :func:`run_rows` uses for ``n_rows`` rows: ``numba.get_num_threads()``, at
    most one per row, at least 1."""
    return max(1, min(numba.get_num_threads(), n_rows))


def run_rows(kernel, rows, *args):
    """``kernel(rows, queue, *args)`` on T threads sharing one new ``queue`` (see the module
    docstring); ``rows``: int64 array."""
    rows = np.ascontiguousarray(rows, np.int64)
    queue = np.zeros(1, np.int64)
    from raytrace.jit import late     # (here: the kernels' keys do not follow the compile layer's code)
    kernel = late.choose(kernel, (rows, queue) + args)    # the full build, or its late twin
    n = thread_count(rows.shape[0])
    if n == 1:
        kernel(rows, queue, *args)
        return
    futures = [_pool(n - 1).submit(kernel, rows, queue, *args) for _ in range(1, n)]
    interrupted = False
    try:
        kernel(rows, queue, *args)
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
