"""Compile time apart from render time: ``warmup.CompileTimer`` counts Numba's compile
events, renders report ``info.compile_seconds`` apart from ``info.seconds`` (and so do the
EXR header and ``raytrace merge``), and every phase of ``raytrace render`` that compiles
says so. A fake clock makes the times exact: it moves only when a test moves it."""
import io
import json

import pytest
from numba import njit
from numba.core import event

import raytrace
from raytrace import cli, renderer, views
from raytrace.jit import notice, warmup
from raytrace.film import aov_files
from raytrace.film.merge import merge_renders
from raytrace.image import RenderInfo

SCENE = {
    "camera": {"center": [0, 0, 5], "direction": [0, 0, -1], "fov": 40},
    "image": {"width": 8, "height": 6},
    "materials": {"red": {"diffuse": [1, 0, 0]}},
    "lights": [{"type": "point", "position": [0, 5, 5], "color": [1, 1, 1]}],
    "objects": [{"type": "sphere", "radius": 1, "material": "red"}],
}


class FakeClock:
    """``time`` for the modules that measure: ``perf_counter`` moves only by ``advance``."""

    def __init__(self):
        self.now = 1000.0

    def perf_counter(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds

    def __getattr__(self, name):                  # sleep, time, ... as usual
        import time
        return getattr(time, name)


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    for module in (notice, warmup, renderer, cli):
        monkeypatch.setattr(module, "time", fake)
    return fake


def fake_compile(clock, seconds, nested=True):
    """What Numba does when it compiles: a ``numba:compile`` event (with a nested one for
    a called function) while the clock moves ``seconds``."""
    with event.trigger_event("numba:compile", data={"what": "outer"}):
        clock.advance(seconds / 2)
        if nested:
            with event.trigger_event("numba:compile", data={"what": "inner"}):
                clock.advance(seconds / 2)
        else:
            clock.advance(seconds / 2)


def test_timer_counts_outermost_compiles_and_counted_waits(clock):
    started = []
    with warmup.CompileTimer(on_start=lambda: started.append(clock.now)) as timer:
        clock.advance(1.0)                       # work: not compiling
        fake_compile(clock, 4.0)                 # nested events count once
        clock.advance(2.0)
        fake_compile(clock, 0.5, nested=False)
        with timer.counting():                   # e.g. waiting for the child's compile
            clock.advance(3.0)
            fake_compile(clock, 1.0)             # inside a counted block: not twice
    assert timer.compiled and timer.seconds == 4.0 + 0.5 + 3.0 + 1.0
    assert started == [1001.0]                   # once, when the first compile started
    with warmup.CompileTimer() as idle:
        clock.advance(5.0)
    assert not idle.compiled and idle.seconds == 0.0
    fake_compile(clock, 2.0)                     # after the block: not listened to
    assert timer.seconds == 8.5


def test_timer_sees_a_real_compile_and_not_a_loaded_kernel():
    @njit
    def triple(x):
        return 3 * x

    with warmup.CompileTimer() as first:
        assert triple(2) == 6
    with warmup.CompileTimer() as second:
        assert triple(3) == 9                    # compiled already: no event
    assert first.compiled and first.seconds > 0.0
    assert not second.compiled and second.seconds == 0.0


def test_notice_reports_the_compile_seconds_not_the_block(clock):
    stream = io.StringIO()
    with warmup.notice_on_compile(stream=stream) as timer:
        clock.advance(10.0)                      # rendering before ...
        fake_compile(clock, 3.0)
        clock.advance(20.0)                      # ... and after the compile
    assert timer.seconds == 3.0
    assert stream.getvalue() == ("raytrace: compiling kernels ...\n"
                                 "raytrace: kernels compiled in 3.0 s\n")
    quiet = io.StringIO()
    with warmup.notice_on_compile(enabled=False, stream=quiet) as timer:
        fake_compile(clock, 2.0)
    assert quiet.getvalue() == "" and timer.seconds == 2.0     # measured, not said


def _slow_first_render(monkeypatch, clock, render_s=2.0, compile_s=5.0):
    """The Whitted render compiles for ``compile_s`` on its way, then renders ``render_s``."""
    real = renderer._render_whitted

    def render_whitted(*args, **kwargs):
        fake_compile(clock, compile_s)
        clock.advance(render_s)
        return real(*args, **kwargs)
    monkeypatch.setattr(renderer, "_render_whitted", render_whitted)


def test_render_info_keeps_compile_time_out_of_seconds(monkeypatch, clock):
    scene = raytrace.load_scene(SCENE)
    raytrace.render(scene)                       # the real kernels are loaded or compiled here
    _slow_first_render(monkeypatch, clock)
    image = raytrace.render(scene)
    assert image.info.seconds == 2.0 and image.info.compile_seconds == 5.0
    meta = aov_files.render_metadata(image, scene)
    assert meta["seconds"] == 2.0 and meta["compile_seconds"] == 5.0
    monkeypatch.undo()
    warm = raytrace.render(scene)
    assert warm.info.compile_seconds == 0.0      # every kernel is loaded now


def test_exr_header_and_closing_line_split_the_times(tmp_path, monkeypatch, clock, capsys):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(SCENE))
    out = tmp_path / "out.exr"
    assert cli.main(["render", str(path), "-o", str(out), "--quiet"]) == 0     # warm
    monkeypatch.setattr(warmup, "is_cached", lambda kind, media=False: True)
    monkeypatch.setattr(warmup, "builder_cached", lambda: True)
    real = renderer._render_whitted
    _slow_first_render(monkeypatch, clock)
    capsys.readouterr()
    assert cli.main(["render", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["raytrace: compiling kernels ...",
                   "raytrace: kernels compiled in 5.0 s",
                   f"wrote {out} (8x6, 1 spp, whitted, 2.00 s render, 5.0 s compiling kernels)"]
    _, meta = raytrace.read_exr(out)
    assert meta["seconds"] == 2.0 and meta["compile_seconds"] == 5.0
    # warm again: the line is as it always was, and the header says no compiling
    monkeypatch.setattr(renderer, "_render_whitted", real)
    assert cli.main(["render", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"wrote {out} (8x6, 1 spp, whitted, 0.00 s)"]
    assert raytrace.read_exr(out)[1]["compile_seconds"] == 0.0


def test_merge_sums_both_times(tmp_path):
    scene = raytrace.load_scene(SCENE)
    paths = []
    for seed, compiled in ((1, 4.0), (2, 0.0)):
        image = raytrace.render(scene, seed=seed)
        image.info = RenderInfo(**{**vars(image.info), "seconds": 1.5,
                                                 "compile_seconds": compiled})
        paths.append(tmp_path / f"{seed}.exr")
        paths[-1].write_bytes(aov_files.encode_color(paths[-1], image, aov_files.render_metadata(image, scene)))
    _, meta = merge_renders(paths)
    assert meta["seconds"] == 3.0 and meta["compile_seconds"] == 4.0


# ------------------------------------------------------------ notices in every phase
@pytest.fixture
def warm_scene(tmp_path, monkeypatch):
    """A scene file whose kernels (render, depth/normals, the objects view) are loaded
    once, unpatched and silent, so that only the test's fake compile can speak."""
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(SCENE))
    assert cli.main(["render", str(path), "-o", str(tmp_path / "w.png"), "--quiet",
                     "--depth", str(tmp_path / "wd.png"), "0", "10", "--normals", str(tmp_path / "wn.png")]) == 0
    assert cli.main(["render", str(path), "-o", str(tmp_path / "wv.png"), "--quiet", "--view", "objects"]) == 0
    monkeypatch.setattr(warmup, "is_cached", lambda kind, media=False: True)
    monkeypatch.setattr(warmup, "builder_cached", lambda: True)
    return path


def test_depth_and_normals_say_when_they_compile(warm_scene, tmp_path, monkeypatch, clock, capsys):
    out = [str(tmp_path / n) for n in ("o.png", "d.png", "n.png")]
    argv = ["render", str(warm_scene), "-o", out[0], "--depth", out[1], "0", "10", "--normals", out[2]]
    capsys.readouterr()
    assert cli.main(argv) == 0
    assert capsys.readouterr().err.splitlines() == [f"wrote {', '.join(out)} (8x6, 1 spp, whitted, 0.00 s)"]
    real = renderer.render_aovs

    def render_aovs(*args, **kwargs):
        fake_compile(clock, 6.0)
        return real(*args, **kwargs)
    monkeypatch.setattr(renderer, "render_aovs", render_aovs)
    assert cli.main(argv) == 0
    assert capsys.readouterr().err.splitlines() == [
        "raytrace: compiling kernels ...",
        "raytrace: kernels compiled in 6.0 s",
        f"wrote {', '.join(out)} (8x6, 1 spp, whitted, 0.00 s render, 6.0 s compiling kernels)"]


def test_debug_views_say_when_they_compile(warm_scene, tmp_path, monkeypatch, clock, capsys):
    out = str(tmp_path / "v.png")
    argv = ["render", str(warm_scene), "-o", out, "--view", "objects"]
    capsys.readouterr()
    assert cli.main(argv) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"wrote {out} (objects view, 0.00 s)" and not any("compil" in line for line in err)
    real = views._ids

    def ids(*args, **kwargs):
        fake_compile(clock, 7.0)
        return real(*args, **kwargs)
    monkeypatch.setattr(views, "_ids", ids)
    assert cli.main(argv) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == ["raytrace: compiling kernels ...",
                       "raytrace: kernels compiled in 7.0 s"]
    assert err[-1] == f"wrote {out} (objects view, 0.00 s render, 7.0 s compiling kernels)"
