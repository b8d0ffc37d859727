"""The row-kernel runner (``raytrace.kernels.threads.run_rows``): every row once, on the
thread count Numba is set to, errors and Ctrl-C only after every thread has finished."""
import threading
import time

import numba
import numpy as np
import pytest
from numba import njit

from raytrace.kernels.threads import run_rows, thread_count


@njit(nogil=True)
def count_rows(rows, first, step, visits, owner, tag):
    for k in range(first, rows.shape[0], step):
        visits[rows[k]] += 1
        owner[rows[k]] = tag + first


def with_threads(n, fn):
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(n)
        return fn()
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2])
def test_every_row_once_in_the_order_given(threads):
    if threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip(f"Numba allows {numba.config.NUMBA_NUM_THREADS} thread(s) here")
    rows = (np.arange(37) * 23) % 37                  # a permutation, as the path tracer uses
    visits, owner = np.zeros(37, np.int64), np.full(37, -1, np.int64)
    with_threads(threads, lambda: run_rows(count_rows, rows, visits, owner, 100))
    assert np.all(visits == 1)
    # thread t got rows[t::T]
    for t in range(threads):
        assert np.all(owner[rows[t::threads]] == 100 + t)


def test_thread_count_follows_numba_and_the_rows():
    assert with_threads(1, lambda: thread_count(50)) == 1
    assert thread_count(1) == 1
    assert thread_count(0) == 1
    if numba.config.NUMBA_NUM_THREADS >= 2:
        assert with_threads(2, lambda: thread_count(50)) == 2


def _needs_two_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two Numba threads")


def test_a_workers_error_is_raised_after_all_threads_finish():
    _needs_two_threads()
    finished = []

    def kernel(rows, first, step, out):
        if first == 1:
            raise ValueError("row kernel failed")
        time.sleep(0.2)
        finished.append(first)

    with pytest.raises(ValueError, match="row kernel failed"):
        with_threads(2, lambda: run_rows(kernel, np.arange(4), None))
    assert finished == [0]


def test_ctrl_c_waits_for_the_other_threads_then_raises():
    """KeyboardInterrupt in the calling thread's share: the other thread's rows are
    complete when run_rows raises (a pass is never left half written)."""
    _needs_two_threads()
    done = threading.Event()

    def kernel(rows, first, step, out):
        if first == 0:
            raise KeyboardInterrupt
        time.sleep(0.3)
        out[rows[first::step]] = 1
        done.set()

    out = np.zeros(6)
    with pytest.raises(KeyboardInterrupt):
        with_threads(2, lambda: run_rows(kernel, np.arange(6), out))
    assert done.is_set()
    assert np.array_equal(out, [0, 1, 0, 1, 0, 1])
