"""Helpers of the hostile-input tests (tests/test_hostile_*.py).

Generated malformed inputs: mutations of valid files (truncation, byte flips, non-finite
and huge numbers, huge counts, wrong encodings, deep nesting, line edits, structured
edits of JSON values) and hostile command-line values. Each case runs a CLI's
``main(argv)`` in-process and :func:`check` asserts what a user must see:

- exit status 0, or 2 (bad input) or 1 (I/O failure), never an exception or a warning;
- on failure exactly one line on stderr, ``PROG: error: ...`` (or argparse's
  ``python -m PROG ...: error: ...``), naming the user's file when a file was mutated,
  and no new, changed or removed file in the work folder;
- on success an empty stderr and outputs without NaN or infinity.

The number of random cases per reader or option is ``HOSTILE_CASES`` (environment
variable) or the test's default; seeds are fixed, so a failure repeats.
"""
import hashlib
import io
import json
import os
import pathlib
import random
import re
import warnings
from dataclasses import dataclass

import numpy as np

SEED = 20261201


def cases(default):
    """Number of random cases: ``$HOSTILE_CASES`` when set, else ``default``."""
    value = os.environ.get("HOSTILE_CASES")
    return int(value) if value else default


# ------------------------------------------------------------------ values

HOSTILE_NUMBERS = [
    "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "-Infinity", "1e999", "-1e999",
    "1e308", "-1.7e308", "1e-320", "0", "-0", "-1", "1e30", "-1e30",
    "123456789012345678901234567890", "9" * 5000, "0x10", "1_0", "", "1e", "--1", "1.5.2",
    "٣", "²", "1e-400",
]
HUGE_COUNTS = ["0", "-1", "-7", "1000000000", str(2 ** 31), str(2 ** 63), "9" * 30, "1e9",
               "2.5", "3.0"]
TOKENS = ["x", "#", "[", "]", "-", "e", ".", "srev", "bez2", "circ", "null", "{", "}", ",",
          '"', ":", "\t", "v", "f", "0", "1/2/3", "-0"]
JSON_VALUES = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 10 ** 400, -1, 0,
               2 ** 63, 1.5, "str", "", None, True, [], {}, [1], [[1, 2, 3]] * 3,
               {"a": 1}, [float("nan")] * 3, [1e308] * 4, [0, 0, 0, 0], ["1", "2", "3"]]
_NUMBER = re.compile(rb"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
_INTEGER = re.compile(rb"(?<![\d.eE-])\d+(?![\d.eE])")


def deep_json(depth, inner="1"):
    return "[" * depth + inner + "]" * depth


def _replace_match(data, rng, pattern, choices):
    matches = list(pattern.finditer(data))
    if not matches:
        return data + b" " + rng.choice(choices).encode()
    m = rng.choice(matches)
    return data[:m.start()] + rng.choice(choices).encode() + data[m.end():]


def _lines(data):
    return data.split(b"\n")


def mutate_bytes(data, rng):
    """(kind, new bytes): one random mutation of a text file's bytes."""
    kind = rng.choice(["truncate", "flip", "number", "number", "count", "encoding", "lines",
                       "token", "nesting", "empty", "repeat"])
    if kind == "truncate":
        return kind, data[:rng.randrange(max(len(data), 1))]
    if kind == "flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            if not b:
                break
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256) if rng.random() < 0.5 else b[i] ^ (1 << rng.randrange(8))
        return kind, bytes(b)
    if kind == "number":
        return kind, _replace_match(data, rng, _NUMBER, HOSTILE_NUMBERS)
    if kind == "count":
        return kind, _replace_match(data, rng, _INTEGER, HUGE_COUNTS)
    if kind == "encoding":
        text = data.decode("utf-8", "replace")
        pick = rng.randrange(6)
        if pick == 0:
            return kind, text.encode("utf-16")
        if pick == 1:
            return kind, text.encode("utf-32")
        if pick == 2:
            i = rng.randrange(len(data) + 1)
            return kind, data[:i] + b"\xff\xfe\xe9" + data[i:]
        if pick == 3:
            i = rng.randrange(len(data) + 1)
            return kind, data[:i] + b"\x00" + data[i:]
        if pick == 4:
            return kind, bytes(rng.randrange(256) for _ in range(rng.randint(1, 600)))
        return kind, b"\x89PNG\r\n\x1a\n" + data
    if kind == "lines":
        lines = _lines(data)
        i = rng.randrange(len(lines))
        op = rng.randrange(4)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        elif op == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines.insert(i, rng.choice(TOKENS).encode() * rng.randint(1, 5))
        return kind, b"\n".join(lines)
    if kind == "token":
        i = rng.randrange(len(data) + 1)
        return kind, data[:i] + rng.choice(TOKENS).encode() + data[i:]
    if kind == "nesting":
        depth = rng.choice([50, 3000, 100_000])
        i = rng.randrange(len(data) + 1)
        return kind, data[:i] + deep_json(depth).encode() + data[i:]
    if kind == "empty":
        return kind, rng.choice([b"", b"\n", b"   \n\n", b"# nothing\n"])
    lines = _lines(data)                                   # "repeat": a line many times
    i = rng.randrange(len(lines))
    lines[i:i + 1] = [lines[i]] * rng.choice([2, 50, 2000])
    return kind, b"\n".join(lines)


def _paths(value, prefix=()):
    """Every path (tuple of keys/indices) inside a parsed JSON value."""
    stack = [(prefix, value)]
    while stack:
        path, v = stack.pop()
        yield path
        if isinstance(v, dict):
            stack.extend((path + (k,), x) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((path + (i,), x) for i, x in enumerate(v))


def mutate_json(data, rng):
    """(kind, new bytes): set one value of a JSON document to a hostile value (or delete
    a key, or nest it deeply); falls back to byte mutations half of the time."""
    if rng.random() < 0.4:
        return mutate_bytes(data, rng)
    doc = json.loads(data)
    paths = [p for p in _paths(doc) if p]
    path = rng.choice(paths)
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    op = rng.random()
    deep = None
    if op < 0.1 and isinstance(parent, dict):
        del parent[path[-1]]
        kind = "json-delete"
    elif op < 0.2:
        parent[path[-1]] = "@@DEEP@@"
        deep = deep_json(rng.choice([40, 900, 100_000]))
        kind = "json-nesting"
    else:
        parent[path[-1]] = rng.choice(JSON_VALUES)
        kind = "json-value"
    text = json.dumps(doc)
    if deep is not None:
        text = text.replace('"@@DEEP@@"', deep)
    return kind, text.encode()


# ------------------------------------------------------------------ running and checking

@dataclass
class Result:
    status: int
    out: str
    err: str
    warnings: list


def run_main(main, argv, capsys):
    """Call ``main(argv)`` in-process; argparse's SystemExit becomes the status."""
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            status = main([str(a) for a in argv])
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    out, err = capsys.readouterr()
    return Result(status, out, err, [f"{w.category.__name__}: {w.message}" for w in caught])


def snapshot(folder):
    """{path: sha1 of the content} of every file under ``folder``."""
    folder = pathlib.Path(folder)
    return {str(p): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


class Tally:
    """Exit statuses of one campaign; ``done`` prints them (seen with ``pytest -s``) and
    asserts that the campaign both accepted and refused some inputs, so that a generator
    that only makes trivially broken (or only valid) inputs is noticed."""

    def __init__(self, label):
        self.label = label
        self.counts = {}

    def add(self, status):
        self.counts[status] = self.counts.get(status, 0) + 1

    def done(self, need_accepted=True):
        total = sum(self.counts.values())
        counts = dict(sorted(self.counts.items()))
        print(f"\nhostile {self.label}: {total} cases, exit status counts {counts}")
        assert self.counts.get(2, 0) + self.counts.get(1, 0) > 0, self.counts
        if need_accepted and total >= 20:
            assert self.counts.get(0, 0) > 0, self.counts


def check(result, prog, *, before, after, names=(), outputs=(), label=""):
    """Assert the rules of the module docstring for one run (see there)."""
    where = f"[{label}] argv/err: {result.err!r}"
    assert not result.warnings, f"{where}: warnings {result.warnings}"
    assert "Traceback" not in result.err, where
    assert result.status in (0, 1, 2), f"{where}: status {result.status}"
    if result.status == 0:
        assert result.err == "", where
        for path in outputs:                     # the outputs this run wrote
            key = str(path)
            if key in after and after[key] != before.get(key):
                assert_finite_output(pathlib.Path(path))
        return
    lines = result.err.splitlines()
    assert len(lines) == 1 and result.err.endswith("\n"), f"{where}: not one line"
    line = lines[0]
    assert line.startswith(f"{prog}: error: ") or (
        line.startswith(f"python -m {prog}") and ": error: " in line), where
    if names:
        assert any(pathlib.Path(n).name in line for n in names), f"{where}: names none of {names}"
    assert after == before, f"{where}: files changed: " + str(
        sorted(set(after.items()) ^ set(before.items())))


def assert_finite_output(path):
    """An accepted output has no NaN or infinity (OBJ, npz, JSON) or is a real PNG."""
    data = path.read_bytes()
    suffix = path.suffix.lower()
    if suffix == ".obj":
        for line in data.decode().splitlines():
            if line[:2] in ("v ", "vn"):
                values = np.array(line.split()[1:], dtype=np.float64)
                assert np.all(np.isfinite(values)), f"{path}: {line}"
    elif suffix == ".npz":
        with np.load(io.BytesIO(data)) as z:
            for key in z.files:
                a = z[key]
                if a.dtype.kind == "f":
                    assert np.all(np.isfinite(a)), f"{path}: {key} is not finite"
    elif suffix == ".json":
        assert b"NaN" not in data and b"nan" not in data, path
    elif suffix == ".png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n", path


def sentinel_outputs(folder, names):
    """Write old content to the output files, so that a clobbered one is noticed."""
    for name in names:
        p = pathlib.Path(folder) / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"old content: must survive a failed run\n")


def rng_for(*parts):
    """A random generator seeded by SEED and a label (stable across runs)."""
    return random.Random(f"{SEED}:" + ":".join(str(p) for p in parts))
