"""benchmarks/profile_path.py ``--annotate``: samples placed on the right instructions of
machine code read back from memory and disassembled (here a known byte sequence in a
buffer of our own, so that nothing outside it is read)."""
import collections
import ctypes
import pathlib
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
import profile_path  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("objdump") is None,
                                reason="--annotate disassembles with objdump (binutils)")

CODE = bytes.fromhex(
    "4889d6"                  # 0x00 mov %rdx,%rsi
    "48b88877665544332211"    # 0x03 movabs $0x1122334455667788,%rax (objdump wraps its bytes)
    "f20f51c1"                # 0x0d sqrtsd %xmm1,%xmm0
    "f20f5ec1"                # 0x11 divsd %xmm1,%xmm0
    "c3"                      # 0x15 ret
) + b"\x90" * 64              # room for the 16 bytes read past the last sample
SQRT, DIV, RET = 0x0D, 0x11, 0x15


def _annotate(counts, total):
    buf = ctypes.create_string_buffer(CODE, len(CODE))
    entry = ctypes.addressof(buf)
    hits = collections.Counter({entry + off: n for off, n in counts.items()})
    return profile_path.annotate("f", [(entry, "f")], {"f": hits}, total)


def _rows(listing):
    """offset -> (samples, instruction)."""
    out = {}
    for line in listing.splitlines():
        n, off, ins = line.split(None, 2)
        out[int(off, 16)] = (int(n), ins)
    return out


def test_samples_land_on_the_instructions_they_were_taken_at():
    summary, listing = _annotate({SQRT: 7, DIV: 3}, total=20)
    rows = _rows(listing)
    assert sorted(rows)[:5] == [0x00, 0x03, SQRT, DIV, RET]    # the wrapped bytes are no row
    assert rows[0x03][1].startswith("movabs") and rows[SQRT][1].startswith("sqrtsd")
    assert rows[SQRT][0] == 7 and rows[DIV][0] == 3 and rows[RET][0] == 0
    assert sum(n for n, _ in rows.values()) == 10               # none lost, none invented
    assert summary.startswith("f: 10 samples (50.0 % of all)")
    marked = [line.split() for line in summary.splitlines()[1:] if line.split()[1:2] == ["%"]]
    assert [(m[0], m[2], m[3]) for m in marked] == [("35.0", "d", "sqrtsd"), ("15.0", "11", "divsd")]


def test_a_function_without_samples_says_so():
    assert "no samples" in profile_path.annotate("f", [(4096, "f")], {}, 10)[0]
