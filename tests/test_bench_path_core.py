"""bench_path_core's thread-scaling measurement alternates the thread counts."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_path_core  # noqa: E402


def test_best_interleaved_alternates_and_keeps_the_least():
    calls = []
    # a machine slow during the first round: taken 1, 1, 1, 2, 2, 2 instead, a slow
    # spell as long would have fallen on the 1-thread renders alone
    times = iter([9.0, 9.0, 2.0, 1.0, 2.1, 1.1])

    def measure(threads):
        calls.append(threads)
        return next(times)

    best = bench_path_core.best_interleaved(measure, rounds=3)
    assert calls == [1, 2, 1, 2, 1, 2]
    assert best == {1: 2.0, 2: 1.0}


def test_best_interleaved_other_keys_and_rounds():
    seen = []
    best = bench_path_core.best_interleaved(lambda k: seen.append(k) or float(len(seen)),
                                            keys=("a", "b", "c"), rounds=2)
    assert seen == ["a", "b", "c", "a", "b", "c"]
    assert best == {"a": 1.0, "b": 2.0, "c": 3.0}
