"""userio: the plumbing shared by the four command lines."""
import errno

import pytest

from userio import UserError
from userio import cli as ucli
from userio.limits import check_int, check_memory, check_number, human_bytes
from userio.outputs import Outputs
from userio.textio import decode_text, parse_json


def test_run_maps_outcomes_to_exit_codes(capsys):
    def bad():
        raise UserError("objects[1].radius", "must be > 0", file="s.json")

    def io():
        raise OSError(errno.EACCES, "Permission denied", "out.png")

    def bug():
        raise ZeroDivisionError("division by zero")

    def stop():
        raise KeyboardInterrupt
    assert ucli.run("tool", bad) == 2
    assert capsys.readouterr().err == "tool: error: s.json: objects[1].radius: must be > 0\n"
    assert ucli.run("tool", io) == 1
    assert capsys.readouterr().err == "tool: error: out.png: Permission denied\n"
    assert ucli.run("tool", bug) == 3
    assert capsys.readouterr().err.startswith("tool: internal error (a bug")
    assert ucli.run("tool", stop) == 130
    assert ucli.run("tool", lambda: 5) == 5 and ucli.run("tool", lambda: None) == 0


def test_messages_stay_on_one_line(capsys):
    def bad():
        raise UserError(None, "is a folder", file="evil\nname\x1b[2J.json")
    assert ucli.run("tool", bad) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "evil\\nname" in err


def test_text_decoding_names_the_file_and_the_byte():
    with pytest.raises(UserError, match=r"f.txt: a binary file, not text \(byte 0x89 at offset 0\)"):
        decode_text(b"\x89PNG\r\n\x1a\n....", "f.txt")
    with pytest.raises(UserError, match=r"f.txt: line 2: not UTF-8 text \(byte 0xe9 at offset 9\)"):
        decode_text(b"line one\n\xe9t\xe9", "f.txt")
    assert decode_text("\ufeffhello".encode(), "f.txt") == "hello"            # a BOM is fine


def test_json_failures_are_one_error():
    with pytest.raises(UserError, match=r"s.json: line 2 column 1: invalid JSON"):
        parse_json('{"a": 1,\n}', "s.json")
    with pytest.raises(UserError, match="nested too deeply"):
        parse_json("[" * 100000 + "]" * 100000, "s.json")
    with pytest.raises(UserError, match="s.json: invalid JSON: Exceeds the limit"):
        parse_json("1" * 5000, "s.json")


def test_limits():
    assert check_int(5, "n", 1, 10) == 5
    for bad in (0, 11, True, 2.5, "3"):
        with pytest.raises(UserError, match="n: must be"):
            check_int(bad, "n", 1, 10)
    for bad in (float("nan"), float("inf"), 10 ** 400):
        with pytest.raises(UserError, match="x: must be a finite number"):
            check_number(bad, "x")
    with pytest.raises(UserError, match=r"--size: a big image would need about 2.0 GiB of memory \(limit 1.0 GiB\)"):
        check_memory(2 * 1024 ** 3, "a big image", "--size", limit=1024 ** 3)
    assert human_bytes(10 ** 400) == "more than 10^300 bytes"


def test_outputs_are_checked_first_and_written_together(tmp_path):
    old = tmp_path / "a.png"
    old.write_bytes(b"old")
    outs = Outputs()
    outs.add(old, "-o", (".png",))
    with pytest.raises(UserError, match="--depth: the same file is also given to -o"):
        outs.add(tmp_path / "." / "a.png", "--depth", (".png",))
    with pytest.raises(UserError, match="unsupported file format '.jpg'"):
        outs.add(tmp_path / "b.jpg", "--normals", (".png",))
    outs.add(tmp_path / "new" / "b.png", "--normals", (".png",))
    outs.set(old, b"new a")
    outs.set(tmp_path / "new" / "b.png", b"new b")
    assert outs.commit() == [str(old), str(tmp_path / "new" / "b.png")]
    assert old.read_bytes() == b"new a" and (tmp_path / "new" / "b.png").read_bytes() == b"new b"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.png", "b.png", "new"]
