"""The parallel first-compile helper of the CLI."""
import io
import json

import pytest
from numba import njit, typeof

import raytrace
from raytrace.accel.instances import SceneAccel, with_empty_instance_levels
from raytrace.jit import warmup

PLANE_SCENE = {
    "camera": {"center": [0, 1, 0], "direction": [0, -1, 0], "up": [0, 0, -1]},
    "lights": [{"type": "directional", "direction": [0, -1, 0]}],
    "objects": [{"type": "plane", "normal": [0, 1, 0]}],
}


def _with_instances(uses, nested=False):
    """PLANE_SCENE plus ``uses`` instances of one sphere prototype (in a group if
    ``nested``)."""
    inst = [{"type": "instance", "prototype": "ball", "transform": [{"translate": [k, 0, 0]}]}
            for k in range(uses)]
    objects = [{"type": "group", "children": inst}] if nested else inst
    return dict(PLANE_SCENE, prototypes={"ball": {"type": "sphere", "radius": 0.1}},
                objects=PLANE_SCENE["objects"] + objects)


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


def test_uses_instances_peeks_at_prototypes_shown_twice(tmp_path):
    p = tmp_path / "s.json"
    for data, expected in [(_with_instances(2), True), (_with_instances(2, nested=True), True),
                           (_with_instances(1), False), (PLANE_SCENE, False)]:
        p.write_text(json.dumps(data))
        assert warmup.uses_instances(p) == expected, data["objects"]
        # the peek agrees with what the loader builds
        assert isinstance(raytrace.load_scene(data).accel, SceneAccel) == expected
    p.write_text("{not json")
    assert not warmup.uses_instances(p)
    assert not warmup.uses_instances(tmp_path / "scene.txt")


def test_empty_instance_levels_have_the_type_of_a_scene_with_instances():
    """What ``compile_here(..., instanced=True)`` compiles for is the type an instanced
    scene's kernels are called with (so the child's compile is the one the scene uses)."""
    empty = with_empty_instance_levels(raytrace.load_scene(PLANE_SCENE).accel)
    instanced = raytrace.load_scene(_with_instances(3)).accel
    plain = raytrace.load_scene(PLANE_SCENE).accel
    assert typeof(empty) == typeof(instanced)
    assert typeof(plain) != typeof(instanced)                # negative control
    assert empty.inst_nodes.shape[0] == 0


def test_notice_on_compile_speaks_only_when_numba_compiles():
    @njit                                       # a fresh dispatcher: compiles on first call
    def twice(x):
        return 2 * x

    stream = io.StringIO()
    with warmup.notice_on_compile(stream=stream):
        assert twice(3) == 6
    text = stream.getvalue()
    assert "raytrace: compiling kernels ...\n" in text and "kernels compiled in" in text
    stream = io.StringIO()
    with warmup.notice_on_compile(stream=stream):
        assert twice(4) == 8                    # compiled already: no event, no notice
    assert stream.getvalue() == ""


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "folder", "regular"])
def test_peeking_never_opens_what_is_not_a_regular_file(tmp_path, kind):
    """The warm-up peeks at the scene file before the loader checks it: a FIFO (opening it
    would block), a link to /dev/zero (endless) or a folder is left to the loader; a
    regular file is read (negative control)."""
    import os
    p = tmp_path / "scene.json"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "dev_zero":
        p.symlink_to("/dev/zero")
    elif kind == "folder":
        p.mkdir()
    else:
        p.write_text('{"integrator": {"type": "path"}}')
    assert warmup.integrator_of(p) == ("path" if kind == "regular" else "whitted")
    assert warmup.readable_json(p) == (kind == "regular")


MEDIA_SCENE = dict(PLANE_SCENE, integrator={"type": "path"}, media={"fog": {"type": "homogeneous", "sigma_t": 0.1}},
                   medium="fog")


def test_warm_up_picks_the_media_kernels_for_a_scene_with_media(tmp_path, monkeypatch):
    """The warm-up of a scene with media compiles the media integrator's row kernel (the
    integrator table's), one without media the surface one; the loader agrees."""
    from raytrace.kernels.path import path_rows
    calls = []
    monkeypatch.setattr(warmup, "is_cached", lambda kind, media=False: False)
    monkeypatch.setattr(warmup, "start", lambda kind, instanced=False, media=False: calls.append(
        ("start", kind, media)) or [])
    monkeypatch.setattr(warmup, "compile_here", lambda kind, instanced=False, media=False: calls.append(
        ("here", kind, media)))
    p = tmp_path / "s.json"
    for data, media in [(MEDIA_SCENE, True), (dict(PLANE_SCENE, integrator={"type": "path"}), False)]:
        p.write_text(json.dumps(data))
        assert warmup.uses_media(p) == media
        assert (raytrace.load_scene(data).media is not None) == media       # the loader's own answer
        calls.clear()
        with warmup.ahead(p):
            pass
        assert calls == [("start", "path", media), ("here", "path", media)]
        assert warmup.roots("path") == [path_rows]       # one row kernel, compiled per kind of scene
    p.write_text("{not json")
    assert not warmup.uses_media(p)


def test_child_side_compiles_the_media_kernels():
    warmup.compile_here("path", media=True)
    assert warmup.is_cached("path", media=True)
