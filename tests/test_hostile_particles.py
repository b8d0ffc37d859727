"""Hostile input for ``python -m particles``: every option and every system parameter
(``--param KEY=VALUE``, JSON values) of simulate, stable-dt, energy and error, run
in-process through ``particles.cli.main``; the examples of the hostile-input issue as
regression tests. See tests/hostile.py for what is asserted. ``HOSTILE_CASES=5000``
runs a longer random campaign."""
import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO
from hostile import Tally, cases, check, deep_json, rng_for, run_main, sentinel_outputs, snapshot
from interrupts import finish, interrupt_after, start

from particles.cli import main

HOSTILE_FLOATS = ["nan", "inf", "-inf", "0", "-0", "-1", "1e308", "1e-320", "abc", "",
                  "1e999"]
HOSTILE_JSON = ["NaN", "Infinity", "-Infinity", "1e999", "-1", "0", "1e308", "1e-320",
                "9" * 400, "true", "null", '"text"', "[]", "{}", "[1, 2]", "[1, 2, 3]",
                "[NaN, 0, 0]", "[1e308, 1e308, 1e308]", deep_json(100_000), deep_json(50),
                "[[0, 0], [1, 1]]", "[[9999, 0]]", '["a", "b"]', "[2.5, 3]", "corners",
                "[100000, 100000]", "[2, 2]", "[3, 4]", "[1e300, 2]", "[-1, 5]", "1.5", "5",
                "[[0, 0, 0], 0.5]", "[[0, -1, 0], 0.3, 0.5]"]

# per system: parameter -> valid values (the hostile ones are drawn from HOSTILE_JSON)
VALID = {
    "circle": {"x0": ["[1, 0]", "[0.5, 0.5]"]},
    "spring": {"k": ["4"], "m": ["2"], "c": ["0.4"], "x0": ["1"], "v0": ["0"]},
    "pendulum": {"length": ["1"], "stiffness": ["50"], "mass": ["1"], "angle": ["30"],
                 "drag": ["0.1"], "damping": ["0"], "gravity": ["[0, -9.81, 0]"]},
    "chain": {"count": ["3", "4"], "segment": ["0.2"], "stiffness": ["100"], "mass": ["0.1"],
              "drag": ["0.05"], "damping": ["0"], "gravity": ["[0, -9.81, 0]"],
              "horizontal": ["true", "false"]},
    "cloth": {"grid": ["[3, 3]", "[4, 3]"], "size": ["[1, 1]"], "mass": ["0.5"],
              "stiffness": ["400"], "shear_stiffness": ["40"], "flex_stiffness": ["4"],
              "damping": ["0.05"], "drag": ["0.5"], "gravity": ["[0, -9.81, 0]"],
              "pin": ["corners", "top_row", "[[0, 0]]"], "layout": ['"horizontal"', "vertical"],
              "center": ["[0, 0, 0]"], "wind": ["[0, 0, 0]"], "wind_coeff": ["0", "0.5"],
              "sphere": ["[[0, -1, 0], 0.3]"], "sphere_margin": ["0.01"], "friction": ["0.5"],
              "cg_tol": ["1e-4"]},
}


def param_args(rng, system, hostile_rate=0.5):
    out = []
    names = list(VALID[system])
    if system == "cloth" and rng.random() < 0.8:       # keep cloth runs small
        out += ["--param", "grid=" + rng.choice(VALID["cloth"]["grid"])]
    for key in rng.sample(names, k=rng.randint(0, min(3, len(names)))):
        value = rng.choice(HOSTILE_JSON) if rng.random() < hostile_rate \
            else rng.choice(VALID[system][key])
        if key == "grid" and value in ("[100000, 100000]",) and rng.random() < 0.5:
            value = "[2, 2]"
        out += ["--param", f"{key}={value}"]
    if rng.random() < 0.05:
        out += ["--param", rng.choice(["nokey=1", "=3", "grid", "k", "gr\nid=[2,2]"])]
    return out


def run_case(work, argv, capsys, tally, label):
    sentinel_outputs(work, ["out.npz", "out.png", "out.json"])
    before = snapshot(work)
    r = run_main(main, argv, capsys)
    outs = [str(a) for a in argv if str(a).startswith(str(work))]
    outs += [str(p) for p in (work / "meshes").glob("*.obj")] if (work / "meshes").exists() else []
    check(r, "particles", before=before, after=snapshot(work),
          outputs=outs + [str(work / "out.json")], label=f"{label}: {argv}")
    tally.add(r.status)
    return r


def test_hostile_simulate(tmp_path, capsys, monkeypatch):
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "a_file").write_text("a file\n")
    monkeypatch.chdir(work)                      # the default output SYSTEM.npz lands here
    rng = rng_for("particles", "simulate")
    tally = Tally("particles simulate")
    pools = {
        "--integrator": ["rk4", "euler", "implicit", "rk45", "symplectic_euler", "verlet", "",
                         "RK4"],
        "--dt": ["0.005", "0.001", "0.05"] + HOSTILE_FLOATS,
        "--steps": ["0", "5", "20", "-1", "1000000000000000", "100000001", "2.5", "1e3"],
        "--every": ["1", "3", "0", "-2", "1000000000000"],
        "--rtol": ["1e-6", "1e-14", "2"] + HOSTILE_FLOATS[:4],
        "--atol": ["1e-9", "0", "nan"],
        "-o": [work / "out.npz", work / "out.dat", work / "out", work / "sub",
               work / "new" / "out.npz", work / "a_file" / "x.npz", "/proc/hostile.npz"],
        "--mesh-dir": [work / "meshes", work / "a_file", work / "sub"],
    }
    for i in range(cases(150)):
        system = rng.choice(list(VALID))
        argv = ["simulate", system, "--steps", rng.choice(["5", "12"])]
        for opt in rng.sample(list(pools), k=rng.randint(0, 4)):
            if opt == "--mesh-dir" and rng.random() < 0.5 and system != "cloth":
                continue
            argv += [opt, rng.choice(pools[opt])]
        if "--dt" not in argv and system == "cloth":
            argv += ["--dt", "0.002"]
        argv += param_args(rng, system)
        run_case(work, argv, capsys, tally, f"simulate case {i}")
    tally.done()


def test_hostile_stable_dt(tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    rng = rng_for("particles", "stable-dt")
    tally = Tally("particles stable-dt")
    pools = {"--lo": ["1e-3", "0", "-1e-3", "nan", "inf", "1e-300", "0.2"],
             "--hi": ["0.05", "nan", "inf", "1e-4", "0", "1e308"],
             "--duration": ["0.05", "-1", "0", "nan", "inf", "1e300", "1e9"],
             "--integrator": ["rk4", "euler", "implicit_euler", "nope"]}
    for i in range(cases(40)):
        system = rng.choice(["pendulum", "chain", "cloth"])
        argv = ["stable-dt", system, "--duration", "0.05", "--lo", "1e-3", "--hi", "0.05"]
        for opt in rng.sample(list(pools), k=rng.randint(1, 3)):
            argv += [opt, rng.choice(pools[opt])]
        if system == "cloth":
            argv += ["--param", "grid=[3,3]"]
        argv += param_args(rng, system, hostile_rate=0.3) if rng.random() < 0.4 else []
        run_case(work, argv, capsys, tally, f"stable-dt case {i}")
    tally.done()


def test_hostile_studies(tmp_path, capsys):
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    rng = rng_for("particles", "studies")
    tally = Tally("particles energy/error")
    outputs = [work / "out.png", work / "out.jpg", work / "out", work / "sub",
               work / "new" / "e.png"]
    jsons = [work / "out.json", work / "out.txt", work / "sub", work / "out.png"]
    for i in range(cases(40)):
        command = rng.choice(["energy", "energy", "energy", "error"])
        if command == "energy":
            argv = ["energy", "--system", rng.choice(["circle", "oscillator", "pendulum"]),
                    "--steps", rng.choice(["50", "0", "-1", "200", "100000001", "x"]),
                    "--dt", rng.choice(["0.01", "1", "nan", "0", "-0.1", "1e308"])]
        else:
            argv = ["error", "--system", rng.choice(["circle", "spring", "pendulum", "nope"])]
        argv += ["-o", rng.choice(outputs)]
        if rng.random() < 0.4:
            argv += ["--json", rng.choice(jsons)]
        integrators = rng.choice(["euler", "euler,rk4", "rk4,nope", ",", "", "euler,,",
                                  "x" * 200])
        if command == "error" and rng.random() < 0.7:
            integrators = rng.choice(["verlet", ",", "", "euler,,nope"])
        argv += ["--integrators", integrators]
        run_case(work, argv, capsys, tally, f"{command} case {i}")
    tally.done()


# ------------------------------------------------------------------ the examples

def one_line(r):
    assert "Traceback" not in r.err and len(r.err.splitlines()) == 1, r.err
    return r.err


@pytest.mark.parametrize("argv,message", [
    (["simulate", "circle", "--steps", "1000000000000000"],
     "--steps: must be <= 100000000, got 1000000000000000"),
    (["simulate", "cloth", "--param", "grid=[100000,100000]"],
     "cloth: grid: must be <= 1024, got 100000"),
    (["simulate", "cloth", "--param", "grid=[1000,1000]", "--steps", "100000"],
     "simulate: 100001 recorded states of 6000000 numbers would need about"),
    (["simulate", "chain", "--param", "count=100000", "--steps", "100000000", "--every", "2"],
     "simulate: 50000001 recorded states of 600006 numbers would need about"),
    (["stable-dt", "pendulum", "--lo", "0"], "--lo: must be a finite number > 0, got 0.0"),
    (["stable-dt", "pendulum", "--hi", "nan"], "--hi: must be a finite number > 0, got nan"),
    (["stable-dt", "pendulum", "--duration", "-1"], "--duration: must be > 0.0, got -1"),
    (["stable-dt", "pendulum", "--lo", "1e-12"], "--lo: --duration / --lo = 1e+12 steps"),
    (["simulate", "circle", "--rtol", "nan", "--integrator", "rk45"],
     "--rtol: must be a finite number, got nan"),
    (["simulate", "cloth", "--param", "grid=" + deep_json(100_000)],
     "JSON value nested too deeply"),
    (["simulate", "spring", "--param", "k=" + "9" * 5000], "Exceeds the limit"),
    (["simulate", "spring", "--param", "k=" + "9" * 400], "k: must be a finite number"),
    (["simulate", "pendulum", "--param", "angle=NaN"], "angle: must be a finite number"),
    (["simulate", "cloth", "--param", "grid=[2.5,3]"], "grid: must be an integer, got 2.5"),
    (["simulate", "pendulum", "--param", "angle=0", "--param", "gravity=[0,0,0]", "--dt",
      "1e308", "--steps", "5"], "simulate: the recorded times are not finite"),
])
def test_limits_and_non_finite_values(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run_main(main, argv, capsys)
    assert r.status == 2 and one_line(r).startswith("particles: error: ") and message in r.err, \
        r.err
    assert list(tmp_path.iterdir()) == []


def test_failed_run_leaves_existing_outputs_alone(tmp_path, capsys):
    out = tmp_path / "out.npz"
    out.write_bytes(b"old")
    r = run_main(main, ["simulate", "circle", "-o", out, "--mesh-dir", tmp_path / "x",
                        "--steps", "3"], capsys)
    assert r.status == 2 and "--mesh-dir: meshes are written for cloth only" in one_line(r)
    assert out.read_bytes() == b"old" and sorted(tmp_path.iterdir()) == [out]
    # a blow-up after the output paths were checked: nothing written either
    r = run_main(main, ["simulate", "cloth", "-o", out, "--mesh-dir", tmp_path / "m",
                        "--dt", "0.05", "--steps", "200"], capsys)
    assert r.status == 2 and "blew up at step" in one_line(r)
    assert out.read_bytes() == b"old" and sorted(tmp_path.iterdir()) == [out]


def test_output_name_is_the_real_one(tmp_path, capsys):
    r = run_main(main, ["simulate", "circle", "-o", tmp_path / "out.dat", "--steps", "5"],
                 capsys)
    assert r.status == 2 and "out.dat: -o: unsupported" in one_line(r) and "(use .npz)" in r.err
    assert list(tmp_path.iterdir()) == []
    out = tmp_path / "out.npz"
    r = run_main(main, ["simulate", "circle", "-o", out, "--steps", "5"], capsys)
    assert r.status == 0 and r.out.rstrip().endswith(f"-> {out}")
    assert sorted(tmp_path.iterdir()) == [out]
    with np.load(out) as z:
        assert z["states"].shape == (6, 2)


def test_blown_up_energy_study_writes_no_nan(tmp_path, capsys):
    out = tmp_path / "e.png"
    r = run_main(main, ["energy", "--system", "oscillator", "--dt", "3", "--steps", "400",
                        "--integrators", "euler,rk4", "-o", out], capsys)
    assert r.status == 0, r.err
    numbers = json.loads(out.with_suffix(".json").read_text())
    rel = numbers["integrators"]["euler"]["rel_error"]
    assert rel[-1] == "inf" and "nan" not in json.dumps(numbers).lower()


def test_help_shows_defaults_and_exit_codes(capsys):
    with pytest.raises(SystemExit) as e:
        main(["simulate", "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 0.005)" in text and "(default: rk4)" in text and "(default: 1000)" in text
    assert "1 I/O failure" in text and "130 interrupted" in text


def test_ctrl_c_exits_130_and_writes_nothing(tmp_path):
    # compile the chain's kernels first (a short run): the Ctrl-C below is meant to land
    # in the simulation, not in a cold Numba compile on a loaded machine
    warm = subprocess.run([sys.executable, "-m", "particles", "simulate", "chain", "--steps", "10",
                           "-o", str(tmp_path / "warm.npz")], cwd=REPO, capture_output=True, text=True)
    assert warm.returncode == 0, warm.stderr
    (tmp_path / "warm.npz").unlink()
    out = tmp_path / "long.npz"
    # Ctrl-C once the simulation's module has been imported (the interpreter's import-time
    # line is the readiness marker; tests/interrupts.py), never after a fixed sleep
    proc = start(["-m", "particles", "simulate", "chain", "--steps", "100000000", "--every", "1000000",
                  "-o", str(out)], cwd=REPO)
    seen = interrupt_after(proc, r"\|\s+particles\.springs$")
    status, lines = finish(proc)
    assert seen, lines
    assert status == 130, lines
    assert lines == ["particles: interrupted; nothing written"], lines
    assert list(tmp_path.iterdir()) == []
