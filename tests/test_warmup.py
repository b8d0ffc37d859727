"""The parallel first-compile helper of the CLI."""
import json

import raytrace  # noqa: F401  (configures the Numba cache folder)
from raytrace import warmup


def test_integrator_of_reads_the_scene_or_the_override(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"integrator": {"type": "path"}}))
    assert warmup.integrator_of(p) == "path"
    assert warmup.integrator_of(p, "whitted") == "whitted"
    p.write_text("{not json")
    assert warmup.integrator_of(p) == "whitted"
    assert warmup.integrator_of(tmp_path / "scene.txt") == "whitted"


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("RAYTRACE_NO_WARMUP", "1")
    assert warmup.start("whitted") is None
    warmup.wait(None)


def test_child_side_compiles_and_caches_the_kernel():
    warmup.compile_here("whitted")          # renders one pixel of a plane-only scene
    assert warmup.is_cached("whitted")
