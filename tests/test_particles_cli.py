"""``python -m particles``: simulate, error and energy commands; clear errors, exit 2."""
import json
import subprocess
import sys

import numpy as np
import pytest

import particles as P
from particles.cli import main


def test_simulate_writes_states(tmp_path, capsys):
    out = tmp_path / "spring.npz"
    assert main(["simulate", "spring", "--integrator", "rk4", "--dt", "0.01", "--steps",
                 "500", "--every", "100", "--param", "k=4", "--param", "c=0.4",
                 "-o", str(out)]) == 0
    data = np.load(out)
    np.testing.assert_allclose(data["t"], [0, 1, 2, 3, 4, 5])
    assert data["states"].shape == (6, 2) and str(data["integrator"]) == "rk4"
    exact = P.DampedSpring(k=4, c=0.4).exact(5.0)
    np.testing.assert_allclose(data["states"][-1], exact, atol=1e-7)
    assert "500 steps of rk4" in capsys.readouterr().out


def test_simulate_cloth_writes_meshes(tmp_path):
    out = tmp_path / "c.npz"
    meshes = tmp_path / "meshes"
    assert main(["simulate", "cloth", "--integrator", "implicit", "--dt", "0.02",
                 "--steps", "20", "--every", "10", "--param", "grid=[6,5]",
                 "--param", "pin=corners", "-o", str(out), "--mesh-dir", str(meshes)]) == 0
    data = np.load(out)
    assert data["positions"].shape == (3, 30, 3) and data["faces"].shape == (40, 3)
    assert data["pinned"].sum() == 4 and list(data["grid"]) == [6, 5]
    objs = sorted(meshes.glob("frame_*.obj"))
    assert len(objs) == 3
    text = objs[-1].read_text()
    assert text.count("\nv ") == 30 and text.count("\nvn ") == 30 and text.count("\nf ") == 40


@pytest.mark.parametrize("argv,message", [
    (["simulate", "circle", "--dt", "-0.005"], "--dt: must be a finite number > 0"),
    (["simulate", "circle", "--integrator", "leapfrog"], "unknown integrator 'leapfrog'"),
    (["simulate", "cloth", "--dt", "0.05", "--steps", "200"], "blew up at step"),
    (["simulate", "cloth", "--param", "stiffness=stiff"], "stiffness=stiff: expected a number"),
    (["simulate", "cloth", "--param", "colour=red"], "cloth has no parameter 'colour'"),
    (["simulate", "cloth", "--param", "grid=[1,4]"], "grid: needs at least 2 x 2"),
    (["simulate", "spring", "--param", "k"], "expected KEY=VALUE"),
    (["simulate", "circle", "--mesh-dir", "m"], "meshes are written for cloth only"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("particles: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_error_study_writes_plot_and_numbers(tmp_path, capsys):
    out = tmp_path / "circle.png"
    assert main(["error", "--system", "circle", "-o", str(out),
                 "--integrators", "euler,rk4,rk45"]) == 0
    assert out.stat().st_size > 10_000 and out.read_bytes()[:4] == b"\x89PNG"
    numbers = json.loads(out.with_suffix(".json").read_text())
    assert numbers["reference"] == "analytic"
    orders = {k: v["order"] for k, v in numbers["integrators"].items()}
    assert abs(orders["euler"] - 1) < 0.2 and abs(orders["rk4"] - 4) < 0.2
    assert orders["rk45"] > 4.5
    assert "rk4" in capsys.readouterr().out


def test_energy_drift_command(tmp_path):
    out = tmp_path / "energy.png"
    assert main(["energy", "--system", "oscillator", "--dt", "0.01", "--steps", "2000",
                 "-o", str(out), "--integrators", "euler,symplectic_euler"]) == 0
    numbers = json.loads(out.with_suffix(".json").read_text())
    e = numbers["integrators"]
    assert e["euler"]["rel_error"][-1] == pytest.approx((1 + 0.01**2) ** 2000 - 1, rel=1e-6)
    assert max(e["symplectic_euler"]["rel_error"]) < 0.01


def test_module_entry_point_exit_status():
    proc = subprocess.run([sys.executable, "-m", "particles", "simulate", "circle", "--dt",
                           "0"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("particles: error: --dt: must be a finite number > 0, "
                                   "got 0.0")


def test_error_study_without_scipy_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.integrate", None)     # import now fails
    assert main(["error", "--system", "pendulum", "-o", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert "no closed form and the reference needs scipy (pip install scipy)" in err
    assert not (tmp_path / "p.png").exists()
