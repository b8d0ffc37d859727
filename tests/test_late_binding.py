"""Late-bound row kernels (``raytrace/jit/late.py``): a row kernel's twin calls the kernels
below it through symbols bound when it is loaded, so an edit below it compiles only the
edited kernels; the twin renders the same image as the full build, bit for bit, and is
never stale.

The suite runs with ``RAYTRACE_LATE=0`` (``conftest.py``: background builds outlive the
process that asks for them); the tests here switch it on."""
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import raytrace
from raytrace.image import read_pfm
from raytrace.jit import late

REPO = pathlib.Path(__file__).resolve().parents[1]


def test_the_probe_passes_on_a_checked_numba():
    """The fence: on a Numba inside ``NUMBA_RANGE`` the probe (a twin calling a kernel
    through a bound symbol) must pass; outside it late binding is off and says why."""
    import numba
    version = tuple(int(p) for p in numba.__version__.split(".")[:2])
    usable, reason = late.status()
    if late.NUMBA_RANGE[0] <= version <= late.NUMBA_RANGE[1]:
        assert usable, reason
    else:
        assert not usable and "outside" in reason


def test_a_twin_calls_its_kernels_through_symbols():
    """The probe's twin binds ``leaf``; the full build links it (no symbol); a recorded
    call whose result type no longer matches is refused (the twin then compiles anew)."""
    from numba import types

    from raytrace.jit import _late_probe as probe
    assert probe.run() == probe.EXPECTED
    out = np.zeros(2)
    probe.rows(np.array([2.0, 3.0, 0.5]), out)
    assert tuple(out) == probe.EXPECTED[0]
    assert not any(late.needed(c.library) for c in probe.rows.overloads.values())
    twin = late.variant(probe.rows)
    entries = [e for c in twin.overloads.values() for e in late.needed(c.library)]
    assert [(m, q) for m, q, _, _ in entries] == [("raytrace.jit._late_probe", "leaf")]
    assert late.bind_all(entries) == {late.symbol(probe.leaf, entries[0][2])}
    module, qualname, argtypes, _ = entries[0]
    assert late.bind_all([(module, qualname, argtypes, types.float64)]) is None      # control


def test_choose_follows_the_switch(monkeypatch):
    from raytrace.kernels import path as pk
    args = (np.zeros(1, np.int64),)
    monkeypatch.setenv("RAYTRACE_LATE", "0")
    assert late.choose(pk.path_rows, args) is pk.path_rows
    monkeypatch.setenv("RAYTRACE_LATE", "twin")
    assert late.choose(pk.path_rows, args) is late.variant(pk.path_rows)
    assert late.variant(pk.path_rows).py_func.__qualname__ == "path_rows__late"


@pytest.mark.parametrize("integrator", ["path", "whitted"])
def test_the_twin_renders_the_full_builds_image_bit_for_bit(monkeypatch, integrator):
    """Same arithmetic in the same order, only LLVM's inlining across the bound calls
    differs: the images are equal bit for bit (spheres, a mesh, textures off, two lights)."""
    scene = raytrace.load_scene(str(REPO / "scenes" / ("cornell_box.json" if integrator == "path"
                                                        else "showcase.json")))
    size = dict(width=24, height=16, spp=2)
    monkeypatch.setenv("RAYTRACE_LATE", "0")
    full = np.asarray(raytrace.render(scene, integrator=integrator, **size))
    monkeypatch.setenv("RAYTRACE_LATE", "twin")
    twin = np.asarray(raytrace.render(scene, integrator=integrator, **size))
    kernel = {"path": "path_rows", "whitted": "whitted_rows"}[integrator]
    assert any(d.overloads and d.py_func.__qualname__ == kernel + "__late" for d in late._variants.values())
    assert full.std() > 0.01
    np.testing.assert_array_equal(twin, full)


def test_an_edit_below_the_row_kernel_compiles_only_the_edited_kernels(tmp_path):
    """In a copy of the package with a cache of its own (a scene of rough metal, whose
    BSDF calls ``ggx_d``): the twin is cached (a first
    render with ``RAYTRACE_LATE=twin``); ``ggx_d`` is edited (x 2); the next render
    (late binding on, as users have it) says it uses the twin, compiles the BSDF kernels
    but neither row kernel, and its image is the full build's of the edited code bit for
    bit (a full render in another process), which differs from the image before the
    edit (the control: the comparison can fail). Its background build then puts the
    full kernel in the cache: the next render compiles nothing."""
    root = tmp_path / "src"
    for package in ("raytrace", "userio"):
        shutil.copytree(REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_"))}
    env.update(PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(tmp_path / "cache"), RAYTRACE_NO_WARMUP="1",
               RAYTRACE_PREBUILT="0")

    def render(name, **extra):
        out = tmp_path / f"{name}.pfm"
        r = subprocess.run([sys.executable, "-m", "raytrace", "render", str(REPO / "scenes" / "path_rough_metal.json"),
                            "--size", "16", "16", "--spp", "2", "-o", str(out)],
                           env=dict(env, **extra), capture_output=True, text=True, timeout=900, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-3000:]
        return read_pfm(out), r.stderr

    before, _ = render("before", RAYTRACE_LATE="twin")
    bsdf = root / "raytrace" / "kernels" / "bsdf.py"
    ggx = "    return 1.0 / (math.pi * a2 * t * t)\n"
    text = bsdf.read_text()
    assert ggx in text
    bsdf.write_text(text.replace(ggx, "    return 2.0 / (math.pi * a2 * t * t)\n"))
    edited, said = render("edited", RAYTRACE_LATE="1")
    assert "late-bound twin" in said, said
    compiled = [line for line in said.splitlines() if line.startswith("raytrace: [")]
    assert any("bsdf.py" in line for line in compiled), said
    assert not any("path_rows" in line for line in compiled), said
    total = int(compiled[0].split("/")[1].split("]")[0])
    assert len(compiled) == total and f"{total} kernels compiled in" in said, said     # the notice counts right
    full, _ = render("full", RAYTRACE_LATE="0")
    assert not np.array_equal(before, full)
    np.testing.assert_array_equal(edited, full)
    deadline = time.monotonic() + 600            # the background build (it holds a lock file)
    while any((tmp_path / "cache").rglob(".building-*")) and time.monotonic() < deadline:
        time.sleep(0.2)
    _, again = render("again", RAYTRACE_LATE="1")
    assert "compil" not in again and "late-bound" not in again, again

