"""The row-kernel runner (``raytrace.kernels.threads.run_rows``): every row once, handed
out in the order given to whichever thread asks, on the thread count Numba is set to;
errors and Ctrl-C only after every thread has finished."""
import threading
import time

import numba
import numpy as np
import pytest
from numba import njit

from raytrace.kernels.threads import next_row, run_rows, thread_count, written_zeros


@njit(nogil=True)
def count_rows(rows, queue, visits, order, owner, tag):
    """Each row taken: its visit counted, its place in the hand-out order, its thread."""
    i = next_row(rows, queue)
    n = 0
    while i >= 0:
        visits[i] += 1
        owner[i] = tag
        order[i] = n
        n += 1
        i = next_row(rows, queue)


def with_threads(n, fn):
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(n)
        return fn()
    finally:
        numba.set_num_threads(before)


DEADLINE = 120          # seconds a thread waits for the other before the test fails


def _wait(event, what):
    """Wait for ``event``; a test that would hang fails after DEADLINE seconds instead."""
    if not event.wait(DEADLINE):
        raise AssertionError(f"waited {DEADLINE} s for {what}")


def _needs_two_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two Numba threads")


def test_one_thread_takes_every_row_in_the_order_given():
    rows = (np.arange(37) * 23) % 37                  # a permutation, as the path tracer uses
    visits, order, owner = np.zeros(37, np.int64), np.full(37, -1, np.int64), np.zeros(37, np.int64)
    with_threads(1, lambda: run_rows(count_rows, rows, visits, order, owner, 7))
    assert np.all(visits == 1)
    assert np.array_equal(order[rows], np.arange(37))


@njit(nogil=True)
def count_rows_slowly(rows, queue, visits, order, owner, tag, spin):
    """``count_rows`` with ``spin`` steps of busy work per row, so that two threads
    really draw from the queue at the same time."""
    i = next_row(rows, queue)
    n = 0
    while i >= 0:
        x = 0.0
        for s in range(spin):
            x = x * 0.5 + s
        visits[i] += 1
        owner[i] = tag if x >= 0.0 else -1
        order[i] = n
        n += 1
        i = next_row(rows, queue)


def test_two_threads_take_each_row_exactly_once():
    """Many rows, two threads drawing from one queue: no row lost or taken twice (the
    counter is atomic), and both threads took rows. The threads start drawing together
    (a barrier), so that neither has taken every row before the other is running."""
    _needs_two_threads()
    n = 400_000
    rows = np.arange(n)
    visits = np.zeros(n, np.int64)
    order, owner = np.zeros(n, np.int64), np.zeros(n, np.int64)
    count_rows_slowly(rows[:1], np.zeros(1, np.int64), visits, order, owner, 0, 1)   # compile first
    visits[:] = 0
    both_running = threading.Barrier(2, timeout=DEADLINE)

    def kernel(rows, queue, visits, order, owner):
        tag = 1 if threading.current_thread() is threading.main_thread() else 2
        both_running.wait()
        count_rows_slowly(rows, queue, visits, order, owner, tag, 1000)   # about 0.5 s of CPU

    with_threads(2, lambda: run_rows(kernel, rows, visits, order, owner))
    assert np.all(visits == 1)
    assert set(np.unique(owner)) == {1, 2}


def _python_kernel(out, taken, before_row=lambda me, k: None, on_empty=lambda me: None):
    """A row kernel in Python (one lock-guarded counter): each row taken is counted in
    ``out`` and its thread's name appended to ``taken``. ``before_row(me, k)`` runs
    before row ``k`` is written, ``on_empty(me)`` when the thread finds the queue empty."""
    lock = threading.Lock()

    def kernel(rows, queue, out):
        me = threading.current_thread().name
        while True:
            with lock:
                k = int(queue[0])
                queue[0] = k + 1
            if k >= rows.shape[0]:
                on_empty(me)
                return
            before_row(me, k)
            out[rows[k]] += 1
            taken.append(me)
    return kernel


def test_a_slow_thread_takes_fewer_rows():
    """The runner hands rows to whichever thread asks: a thread held up on its first row
    (until the other has found the queue empty) takes that row only, the other all 39
    others (a fixed half each would give each 20). Ordered by events, not by timing, so
    the split is the same however busy the machine is."""
    _needs_two_threads()
    out, taken = np.zeros(40), []
    slow_started, rest_taken = threading.Event(), threading.Event()

    def before_row(me, k):
        if me.startswith("raytrace-rows"):       # the pool's thread: held up on its row
            slow_started.set()
            _wait(rest_taken, "the calling thread to empty the queue")
        else:                                    # the calling thread: once the pool's holds one
            _wait(slow_started, "the pool thread's first row")

    def on_empty(me):
        if not me.startswith("raytrace-rows"):
            rest_taken.set()

    kernel = _python_kernel(out, taken, before_row, on_empty)
    with_threads(2, lambda: run_rows(kernel, np.arange(40), out))
    assert np.all(out == 1)
    slow = sum(name.startswith("raytrace-rows") for name in taken)
    assert slow == 1 and len(taken) == 40, taken


def test_thread_count_follows_numba_and_the_rows():
    assert with_threads(1, lambda: thread_count(50)) == 1
    assert thread_count(1) == 1
    assert thread_count(0) == 1
    if numba.config.NUMBA_NUM_THREADS >= 2:
        assert with_threads(2, lambda: thread_count(50)) == 2


def test_a_workers_error_is_raised_after_all_threads_finish():
    """The pool thread fails first (the calling thread's kernel goes on only once the
    other has hit its error): run_rows raises that error, after the calling thread's
    kernel has finished."""
    _needs_two_threads()
    finished, failing = [], threading.Event()

    def kernel(rows, queue, out):
        if threading.current_thread() is not threading.main_thread():
            failing.set()
            raise ValueError("row kernel failed")
        _wait(failing, "the pool thread's error")
        finished.append("main")

    with pytest.raises(ValueError, match="row kernel failed"):
        with_threads(2, lambda: run_rows(kernel, np.arange(4), None))
    assert finished == ["main"]


def test_ctrl_c_waits_for_the_other_threads_then_raises():
    """KeyboardInterrupt in the calling thread: the other thread, which starts on the
    rows only once the interrupt is raised, takes and finishes every row before run_rows
    raises (a pass is never left half written). The pause before its first row does not
    decide the outcome here; it makes a run_rows that raised at once, without waiting,
    return while the rows are still unwritten."""
    _needs_two_threads()
    out, taken = np.zeros(6), []
    worker = _python_kernel(out, taken)
    interrupted = threading.Event()

    def kernel(rows, queue, out):
        if threading.current_thread() is threading.main_thread():
            interrupted.set()
            raise KeyboardInterrupt
        _wait(interrupted, "the calling thread's KeyboardInterrupt")
        time.sleep(0.2)
        worker(rows, queue, out)

    with pytest.raises(KeyboardInterrupt):
        with_threads(2, lambda: run_rows(kernel, np.arange(6), out))
    assert np.array_equal(out, np.ones(6)) and len(taken) == 6


def _resident_bytes():
    """This process's resident memory (Linux ``/proc/self/statm``), in bytes."""
    import os
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_written_zeros_are_zero_and_resident_unlike_np_zeros():
    """``written_zeros`` hands the row kernels pages that are already written (no page
    faults inside the threads); ``np.zeros``, the negative control, leaves 64 MB unmapped
    until first written."""
    size = 64 << 20
    before = _resident_bytes()
    lazy = np.zeros(size // 8)
    lazy_growth = _resident_bytes() - before
    before = _resident_bytes()
    ready = written_zeros((size // 64, 8))
    ready_growth = _resident_bytes() - before
    assert ready.shape == (size // 64, 8) and ready.dtype == np.float64
    assert not ready.any()
    assert ready_growth >= 0.9 * size
    assert lazy_growth < 0.1 * size
    counts = written_zeros((3, 5), np.int64)
    assert counts.dtype == np.int64 and not counts.any()
    del lazy
