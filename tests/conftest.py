"""Shared fixtures: where the read-only course data lives, and an output folder."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("RT_SHARED_DIR", REPO.parent / "shared"))
OUTPUT = REPO / "tests" / "output"

# Late-bound row kernels (raytrace.jit.late) start background compiles that outlive the
# process that asked for them; the suite's processes share cache folders and count the
# files in them, so late binding is off here, and tests/test_late_binding.py switches
# it on where it is the subject.
os.environ["RAYTRACE_LATE"] = "0"


def shared_path(*parts):
    """Path into ../shared, or skip the test when that file is not there."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} not present (../shared is optional)")
    return p


@pytest.fixture
def output_dir(request):
    """A per-test folder under tests/output (ignored by git) for images a test writes."""
    d = OUTPUT / request.node.name.replace("/", "_").replace("[", "_").replace("]", "")
    d.mkdir(parents=True, exist_ok=True)
    return d

@pytest.fixture
def viewers():
    """``start(scene, *args, **kw)``: a ``raytrace view`` process (``view_helpers.Viewer``),
    killed when the test ends."""
    from view_helpers import Viewer
    running = []

    def start(scene, *args, **kw):
        v = Viewer(scene, *args, **kw)
        running.append(v)
        return v
    yield start
    for v in running:
        v.kill()


@pytest.fixture(autouse=True)
def _keys_of_patched_code_forgotten(request):
    """A test that monkeypatches a module of the package (``simd.probe_expected``, a
    kernel module's ``render_pass``) and renders meanwhile memoises dependency keys of
    the patched code (``raytrace/jit/keys.py``). Once the patch is undone (this
    fixture's teardown comes after monkeypatch's) those memos are forgotten, so the next
    test looks its kernels up by the code as it is: a key that depended on an earlier
    test made a worker find the shipped kernels stale and compile in a test. What a
    process does without patching is checked in tests/test_compile_keys.py."""
    yield
    import sys
    keys = sys.modules.get("raytrace.jit.keys")
    if keys is not None and "monkeypatch" in request.fixturenames:
        keys.forget()


# the render_regression fixture (also registered by the package's pytest11 entry point
# under this same name, so loading it twice is harmless)
pytest_plugins = ["raytrace.grade.pytest_plugin"]


# ------------------------------------------------------------------ kernel warm-up
# A cold Numba cache (a fresh clone, CI) makes the first test that renders pay the
# integrator's compile (about 90 s for the path tracer, 50 s for Whitted on one core),
# one after the other. Before any test runs (and before pytest-xdist starts its workers,
# whose sessions skip this), every integrator of the table (raytrace.settings.INTEGRATORS,
# the names of raytrace.integrators.TABLE), the path tracer also with media, and their AOV
# kernels are compiled into the on-disk cache by child processes at once (the scene is
# warm-up's own, raytrace.jit.warmup.compile_here); the tests then load them. A child that
# fails only costs the tests their own compile. Runs for whole-suite runs only (no test
# file or node named on the command line); RAYTRACE_NO_WARMUP=1 skips it.
_WARM = """
import sys
import raytrace
from raytrace.jit import warmup
kind, media = sys.argv[1], sys.argv[2] == "1"
warmup.compile_here(kind, media=media)
scene = raytrace.load_scene({
    "camera": {"center": [0, 1, 0], "direction": [0, -1, 0], "up": [0, 0, -1]},
    "integrator": {"type": kind},
    "lights": [{"type": "directional", "direction": [0, -1, 0]}],
    "objects": [{"type": "plane", "normal": [0, 1, 0]}, {"type": "sphere", "radius": 0.5}],
})
raytrace.render(scene, width=2, height=2, spp=1)
raytrace.render(scene, width=2, height=2, spp=1, aovs=raytrace.layout.AOVS)
"""


def pytest_sessionstart(session):
    import subprocess
    import sys
    from raytrace.settings import INTEGRATORS
    if hasattr(session.config, "workerinput") or os.environ.get("RAYTRACE_NO_WARMUP"):
        return
    if any(".py" in a for a in session.config.invocation_params.args):
        return
    variants = [(kind, "0") for kind in INTEGRATORS] + [("path", "1")]
    procs = [subprocess.Popen([sys.executable, "-c", _WARM, kind, media], cwd=REPO,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
             for kind, media in variants]
    for p in procs:
        try:
            p.wait(timeout=600)
        except subprocess.TimeoutExpired:
            p.kill()


# The slowest files (each compiles kernels again in a fresh process: bounds-checked, for
# the LLVM IR, with SIMD off) go first, so that pytest-xdist does not leave one of them
# for the end while the other workers sit idle.
_HEAVY_FIRST = ("test_boundscheck.py", "test_borrow.py", "test_simd.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: k for k, name in enumerate(_HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
