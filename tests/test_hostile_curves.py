"""Hostile input for ``python -m curves``: mutated .spline, .swp and patch JSON files and
hostile option values, run in-process through ``curves.cli.main``; the examples of the
hostile-input issue as regression tests. See tests/hostile.py for what is asserted.
``HOSTILE_CASES=5000`` runs a longer random campaign."""
import json
import pathlib
import subprocess
import sys

import pytest
from conftest import REPO, SHARED
from hostile import (Tally, cases, check, mutate_bytes, mutate_json, rng_for, run_main,
                     sentinel_outputs, snapshot)

from curves.cli import main

CURVE = "Bezier curve\n0 0\n1 2\n3 2\n4 0\n5 -1\n6 1\n7 0\n"
BSPLINE3D = "B-Spline curve\n# a 3D curve\n0 0 0\n1 1 0.5\n2 0 1\n3 1 1.5\n4 0 2\n"
PATCH = "Bezier patch\n" + "".join(f"{i} {j} {(i * j) % 3 * 0.5}\n"
                                   for i in range(4) for j in range(4))
SWP = """\
# a vase and a small tube
bsp2 prof 4 5
[ 0.3 0 ] [0.6 0.2] [ 0.7 0.6 ] [0.4 1.0] [ 0.35 1.3 ]
srev vase 8 prof
circ c 6 0.1
bez3 path 4 4
[ 1 0 0 ] [ 0 1 0.3 ] [ -1 0 0.6 ] [ 0 -1 0.9 ]
gcyl tube c path
"""
PATCHES_JSON = json.dumps({"basis": "bezier", "patches": [
    [[i, j, 0.2 * i * j] for i in range(4) for j in range(4)],
    [[i + 3, j, 0.1 * i] for i in range(4) for j in range(4)]]})
TEAPOT = REPO / "scenes" / "assets" / "teapot_patches.json"

# name -> (text, commands to run on it, default number of random cases)
SEEDS = {
    "curve.spline": (CURVE, ["info", "plot"], 40),
    "bspline.spline": (BSPLINE3D, ["info", "info", "plot"], 25),
    "patch.spline": (PATCH, ["info", "obj", "obj"], 60),
    "demo.swp": (SWP, ["info", "obj", "obj"], 90),
    "patches.json": (PATCHES_JSON, ["info", "obj"], 90),
    "teapot.json": (TEAPOT.read_text(), ["info", "obj"], 25),
}


def argv_for(command, src, work):
    if command == "plot":
        return ["plot", src, "-o", work / "out.png", "--dpi", "20", "--frames", "4",
                "--samples", "8", "--resolution", "2"]
    if command == "obj":
        return ["obj", src, "-o", work / "out.obj", "--resolution", "3"]
    return ["info", src]


def run_mutations(seed_name, text, commands, count, tmp_path, capsys):
    rng = rng_for("curves", seed_name)
    work = tmp_path / "work"
    work.mkdir()
    suffix = pathlib.Path(seed_name).suffix
    src = work / f"input{suffix}"
    data = text.encode()
    mutate = mutate_json if suffix == ".json" else mutate_bytes
    tally = Tally(f"curves {seed_name}")
    for i in range(count):
        kind, bad = mutate(data, rng)
        src.write_bytes(bad)
        sentinel_outputs(work, ["out.png", "out.obj"])
        command = commands[i % len(commands)]
        before = snapshot(work)
        r = run_main(main, argv_for(command, src, work), capsys)
        check(r, "curves", before=before, after=snapshot(work), names=[src],
              outputs=[work / "out.png", work / "out.obj"],
              label=f"{seed_name} case {i} ({kind}, {command})")
        tally.add(r.status)
    tally.done()


@pytest.mark.parametrize("seed_name", list(SEEDS))
def test_mutated_files(seed_name, tmp_path, capsys):
    text, commands, default = SEEDS[seed_name]
    run_mutations(seed_name, text, commands, cases(default), tmp_path, capsys)


def course_files():
    files = sorted((REPO / "examples" / "course").glob("*.spline")) + \
        sorted((REPO / "examples" / "course").glob("*.swp"))
    files += sorted((SHARED / "course" / "a1").glob("*.spline"))
    return files


@pytest.mark.parametrize("index", range(4))
def test_mutated_course_files(index, tmp_path, capsys):
    """The repository's course-format examples and ../shared's files, when present."""
    files = course_files()
    if index >= len(files):
        pytest.skip("no such course file (examples/course or ../shared absent)")
    f = files[index]
    commands = ["info", "obj"] if f.suffix == ".swp" or "patch" in f.read_text()[:20].lower() \
        else ["info"]
    run_mutations(f.name, f.read_text(), commands, cases(12), tmp_path, capsys)


# ------------------------------------------------------------------ options

def option_pools(work):
    return {
        "--samples": ["0", "-1", "1", "8", "100001", "abc", "1e3", "nan", "", "9" * 30],
        "--resolution": ["0", "-3", "1", "3", "100001", "2.5", "9" * 30],
        "--frames": ["0", "-1", "3", "10001", "x"],
        "--dpi": ["100000", "19", "1201", "20", "24", "nan", "0", "-5"],
        "--method": ["rmf", "course", "RMF", ""],
        "--up": ["y", "z", "x"],
        "-o": [work / "out.png", work / "out.PNG", work / "out.jpg", work / "out",
               work / "sub", work / "new" / "deeper" / "out.png", work / "a_file" / "o.png",
               work / "out.obj", work / "input.spline", "/proc/hostile.png"],
    }


def test_hostile_options(tmp_path, capsys):
    rng = rng_for("curves", "options")
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "a_file").write_text("a file, not a folder\n")
    inputs = {"input.spline": CURVE, "patch.spline": PATCH, "demo.swp": SWP,
              "patches.json": PATCHES_JSON}
    for name, text in inputs.items():
        (work / name).write_text(text)
    (work / "binary.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    files = [work / n for n in inputs] + [work / "missing.swp", work / "sub",
                                          work / "binary.json", "/proc/self/mem"]
    pools = option_pools(work)
    tally = Tally("curves options")
    for i in range(cases(120)):
        command = rng.choice(["plot", "plot", "obj", "info"])
        src = rng.choice(files)
        argv = [command, src]
        allowed = {"plot": ["--samples", "--resolution", "--frames", "--dpi", "--method", "--up"],
                   "obj": ["--resolution"], "info": []}[command]
        if command != "info":
            argv += ["-o", rng.choice(pools["-o"])]
        for opt in rng.sample(allowed, k=rng.randint(0, len(allowed))):
            argv += [opt, rng.choice(pools[opt])]
        if command == "plot" and "--dpi" not in argv:
            argv += ["--dpi", "20"]
        sentinel_outputs(work, ["out.png", "out.obj"])
        before = snapshot(work)
        r = run_main(main, argv, capsys)
        outputs = [pathlib.Path(a) for a in argv if str(a).startswith(str(work))]
        check(r, "curves", before=before, after=snapshot(work), outputs=outputs,
              label=f"options case {i}: {argv}")
        tally.add(r.status)
    tally.done()


# ------------------------------------------------------------------ the examples

def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return p


def run_one(capsys, argv):
    r = run_main(main, argv, capsys)
    assert "Traceback" not in r.err and len(r.err.splitlines()) <= 1, r.err
    return r


def test_non_utf8_patch_json_names_the_file(tmp_path, capsys):
    p = write(tmp_path, "latin.json", b'{"patches": [], "note": "caf\xe9"}')
    r = run_one(capsys, ["info", p])
    assert r.status == 2
    assert r.err.startswith(f"curves: error: {p}: ") and "byte 0xe9" in r.err, r.err


def test_swp_step_counts_are_limited(tmp_path, capsys):
    p = write(tmp_path, "big.swp", "bsp2 a 1000000000000 4\n[0 0] [1 0] [1 1] [0 1]\n")
    r = run_one(capsys, ["obj", p, "-o", tmp_path / "o.obj"])
    assert r.status == 2
    assert f"{p}: line 1: STEPS: must be <= 100000, got 1000000000000" in r.err
    # within the per-statement limit but too large as a whole: refused with the estimate
    pts = " ".join(f"[{i} {i % 2}]" for i in range(400))
    p = write(tmp_path, "wide.swp", f"bsp2 a 100000 400\n{pts}\ncirc c 100000 1\n"
                                    "gcyl g c a\n")
    r = run_one(capsys, ["obj", p, "-o", tmp_path / "o.obj"])
    assert r.status == 2 and f"{p}: line 4: gcyl 'g' with " in r.err
    assert "would need about" in r.err and "TiB of memory (limit " in r.err
    assert not (tmp_path / "o.obj").exists()


def test_dpi_and_sizes_are_limited(tmp_path, capsys):
    p = write(tmp_path, "c.spline", CURVE)
    for argv, message in (
            (["--dpi", "100000"], "--dpi: must be <= 1200, got 100000"),
            (["--samples", "0"], "--samples: must be >= 1, got 0"),
            (["--frames", "100000000"], "--frames: must be <= 10000"),
            (["--resolution", "1000000"], "--resolution: must be <= 100000")):
        r = run_one(capsys, ["plot", p, "-o", tmp_path / "o.png", *argv])
        assert r.status == 2 and r.err.startswith(f"curves: error: {message}"), r.err
    assert not (tmp_path / "o.png").exists()


def test_zero_tangent_names_the_file(tmp_path, capsys):
    p = write(tmp_path, "dot.spline", "Bezier curve\n" + "1 1\n" * 4)
    r = run_one(capsys, ["plot", p, "-o", tmp_path / "o.png", "--dpi", "20"])
    assert r.status == 2
    assert r.err.startswith(f"curves: error: {p}: bezier curve: zero tangent at sample 0"), r.err
    p = write(tmp_path, "stop.swp", "circ c 8 0.1\nbez3 a 4 4\n[1 1 1] [1 1 1] [1 1 1] [1 1 1]\n"
                                    "gcyl g c a\n")
    r = run_one(capsys, ["obj", p, "-o", tmp_path / "o.obj"])
    assert r.status == 2 and r.err.startswith(
        f"curves: error: {p}: line 4: gcyl 'g': zero tangent at sample 0"), r.err
    p = write(tmp_path, "point.swp", "bez2 a 4 4\n[1 1] [1 1] [1 1] [1 1]\nsrev s 8 a\n")
    r = run_one(capsys, ["obj", p, "-o", tmp_path / "o.obj"])
    assert r.err == f"curves: error: {p}: line 3: srev 's': the surface has no area " \
                    "(its curves collapse to a point)\n"
    p = write(tmp_path, "axis.swp", "bez2 a 4 4\n[1 0] [-1 0.3] [-1 0.6] [1 1]\nsrev s 8 a\n")
    r = run_one(capsys, ["obj", p, "-o", tmp_path / "o.obj"])
    assert r.status == 2 and f"{p}: line 3: srev 's': profile sample" in r.err, r.err


def test_deeply_nested_json_is_one_line(tmp_path, capsys):
    p = write(tmp_path, "deep.json", '{"patches": ' + "[" * 100_000 + "]" * 100_000 + "}")
    r = run_one(capsys, ["info", p])
    assert r.err == f"curves: error: {p}: invalid JSON: nested too deeply\n"
    p = write(tmp_path, "deep2.json", '{"patches": [' + "[" * 500 + "1" + "]" * 500 + "]}")
    r = run_one(capsys, ["info", p])
    assert r.err == f"curves: error: {p}: patches[0]: not a list of numbers\n"
    p = write(tmp_path, "bigint.json", '{"patches": [[[' + "9" * 400 + ", 0, 0]]]}")
    r = run_one(capsys, ["info", p])
    assert r.err == f"curves: error: {p}: patches[0]: not a list of numbers\n"


def test_failed_run_keeps_the_old_output(tmp_path, capsys):
    out = write(tmp_path, "o.obj", "old\n")
    p = write(tmp_path, "bad.swp", "circ c 8 1\ngcyl g c nothere\n")
    assert run_one(capsys, ["obj", p, "-o", out]).status == 2
    assert out.read_text() == "old\n" and sorted(tmp_path.iterdir()) == [p, out]


def test_output_suffix_is_checked_before_the_work(tmp_path, capsys):
    p = write(tmp_path, "c.spline", CURVE)
    r = run_one(capsys, ["plot", p, "-o", tmp_path / "o.svg"])
    assert r.status == 2 and "o.svg: -o: unsupported" in r.err and "(use .png)" in r.err
    assert sorted(tmp_path.iterdir()) == [p]


def test_io_failures_exit_1_naming_the_file(tmp_path, capsys):
    r = run_one(capsys, ["info", "/proc/self/mem"])
    assert (r.status, r.err) == (1, "curves: error: /proc/self/mem: Input/output error\n")
    p = write(tmp_path, "c.spline", CURVE)
    r = run_one(capsys, ["plot", p, "-o", "/sys/hostile.png", "--dpi", "20"])
    assert r.status == 1 and r.err.startswith("curves: error: /sys/hostile.png: "), r.err


def test_help_shows_defaults_and_exit_codes(capsys):
    with pytest.raises(SystemExit) as e:
        main(["plot", "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 32)" in text and "(default: 120)" in text and "(default: rmf)" in text
    assert "1 I/O failure" in text and "2 bad input" in text and "130 interrupted" in text


def test_module_entry_point(tmp_path):
    p = write(tmp_path, "bin.spline", b"\x00\x01\x02binary")
    r = subprocess.run([sys.executable, "-m", "curves", "info", str(p)], capture_output=True,
                       text=True, cwd=REPO)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"curves: error: {p}: ") and "binary" in r.stderr
    assert r.stderr.count("\n") == 1
