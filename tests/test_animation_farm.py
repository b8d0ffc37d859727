"""``raytrace.animate`` and ``raytrace animate``: frame files written whole and once,
skipped on a rerun, an interrupted run resumed, failed frames reported while the others
finish, GIF and MP4 files; and on a two-worker local Dask cluster: frames and tiles
bit-identical to serial renders, a worker killed mid-run without a frame lost, duplicated
or torn, and failing tasks reported while the others finish."""
import json
import os
import pathlib
import re
import signal
import sys

import cloudpickle
import imageio.v2 as iio2
import imageio.v3 as iio
import numpy as np
import pytest

import raytrace
from raytrace.animation import AnimatedScene
from raytrace.animation.farm import animate, local_cluster
from raytrace.animation.frames import parse_frames
from raytrace.cli import main
from raytrace.image import read_pfm, to_8bit

REPO = pathlib.Path(__file__).resolve().parents[1]
WALK = REPO / "scenes" / "animation" / "walk.json"
SMALL = {"width": 32, "height": 24}


def tiny_scene(**animation):
    return {
        "camera": {"center": [0, 1, 5], "look_at": [0, 0.5, 0], "fov": 40},
        "image": {"width": 16, "height": 12},
        "lights": [{"type": "point", "position": [2, 4, 3], "color": [20, 20, 20]}],
        "objects": [{"type": "plane", "normal": [0, 1, 0]},
                    {"type": "sphere", "name": "ball", "center": [0, 0.5, 0], "radius": 0.5}],
        "animation": dict({"end": 3, "fps": 2,
                           "objects": {"ball": {"translate": {"keys": [[0, [-1, 0, 0]], [3, [1, 0, 0]]]}}}},
                          **animation),
    }


def leftovers(folder):
    return [p.name for p in pathlib.Path(folder).iterdir() if p.name.startswith(".")]


# ------------------------------------------------------------------------ serial
def test_frames_are_written_then_skipped_then_forced(tmp_path):
    out = tmp_path / "frames"
    first = animate(tiny_scene(), out, workers=1)
    assert first.ok and first.rendered == list(range(6)) and first.skipped == []
    names = sorted(p.name for p in out.iterdir())
    assert names == [f"frame_{k:04d}.png" for k in range(6)]
    images = [iio.imread(out / n) for n in names]
    assert all(im.shape == (12, 16, 3) for im in images)
    assert not np.array_equal(images[0], images[5])           # the ball moved
    again = animate(tiny_scene(), out, workers=1)
    assert again.rendered == [] and again.skipped == list(range(6))
    forced = animate(tiny_scene(), out, workers=1, force=True, frames="1:5:2")
    assert forced.rendered == [1, 3] and forced.skipped == []
    assert leftovers(out) == []


def test_an_interrupted_run_continues_with_the_missing_frames(tmp_path):
    seen = []

    def stop_after_two(k, path):
        seen.append(k)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        animate(tiny_scene(), tmp_path, workers=1, callback=stop_after_two)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frame_0000.png", "frame_0001.png"]
    rest = animate(tiny_scene(), tmp_path, workers=1)
    assert rest.skipped == [0, 1] and rest.rendered == [2, 3, 4, 5] and rest.ok
    assert leftovers(tmp_path) == []


def test_a_failing_frame_is_reported_and_the_others_finish(tmp_path, capsys):
    scene = tiny_scene(objects={"ball": {"scale": {"keys": [[0, 5], [1, 0.01], [2, 0.01], [3, 5]],
                                                   "interpolation": "catmull_rom"}}})
    summary = animate(scene, tmp_path / "api", workers=1)
    assert sorted(summary.failed) == [3] and summary.rendered == [0, 1, 2, 4, 5]
    assert summary.failed[3].startswith("SceneError: <scene dict>: animation.objects.ball.scale: "
                                        "interpolates to -0.61375 at t = 1.5 s")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(scene))
    status = main(["animate", str(path), "-o", str(tmp_path / "cli"), "--workers", "1", "-q",
                   "--gif", str(tmp_path / "a.gif")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1
    assert err[0].startswith(f"raytrace: frame 3 failed: SceneError: {path}: animation.objects.ball.scale")
    assert err[-1] == "raytrace: no video written: 1 frames failed"
    assert len(list((tmp_path / "cli").glob("frame_*.png"))) == 5 and not (tmp_path / "a.gif").exists()


def test_gif_and_mp4_have_the_frames_and_size(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(tiny_scene()))
    gif, mp4 = tmp_path / "v" / "a.gif", tmp_path / "v" / "a.mp4"
    status = main(["animate", str(path), "-o", str(tmp_path / "f"), "--workers", "1", "--size", "32", "24",
                   "--gif", str(gif), "--mp4", str(mp4), "--format", "pfm"])
    assert status == 0
    err = capsys.readouterr().err
    assert "6 rendered, 0 skipped (already there), 0 failed, of 6" in err and f"wrote {mp4}" in err
    frames = iio.imread(gif, index=None)
    assert frames.shape[:3] == (6, 24, 32)
    reader = iio2.get_reader(mp4, format="FFMPEG")
    assert reader.get_meta_data()["fps"] == pytest.approx(2.0)
    video = [np.asarray(f) for f in reader]
    reader.close()
    assert len(video) == 6 and video[0].shape == (24, 32, 3)
    # the videos show the frames (lossy: close, not equal), in order
    want = [to_8bit(read_pfm(tmp_path / "f" / f"frame_{k:04d}.pfm")).astype(int) for k in (0, 5)]
    assert np.abs(video[5].astype(int) - want[1]).mean() < 6
    assert np.abs(frames[5][..., :3].astype(int) - want[1]).mean() < 6
    assert np.abs(video[5].astype(int) - want[0]).mean() > 2 * np.abs(video[5].astype(int) - want[1]).mean()
    assert leftovers(tmp_path / "v") == []


def test_frame_selection():
    assert parse_frames("2:8:3", 10) == [2, 5]
    assert parse_frames(":3", 10) == [0, 1, 2] and parse_frames("-2:", 10) == [8, 9]
    assert parse_frames("7", 10) == [7]
    for text, message in [("5:2", "selects no frame"), ("12", "outside 0 .. 9"),
                          ("1:4:0", "STEP must be > 0"),
                          ("a:b", "expected A:B[:STEP]"), ("1:2:3:4", "expected A:B[:STEP]")]:
        with pytest.raises(raytrace.SceneError, match=re.escape(message)):
            parse_frames(text, 10)


@pytest.mark.parametrize("args, where, message", [
    (["--workers", "0"], "--workers", "must be from 1 to 1024"),
    (["--frames", "9:"], "--frames", "selects no frame"),
    (["--mp4", "x.mp4", "--size", "33", "24"], "--mp4", "needs an even width and height, got 33 x 24"),
    (["--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], "--workers", "with --scheduler"),
    (["--spp", "0"], "--spp", "must be"),
    (["--gif", "x.png"], "--gif", "unsupported video format '.png'"),
    (["--fps", "0"], "--fps", "must be a number in (0, 1000]"),
])
def test_bad_options_exit_2_before_rendering(tmp_path, capsys, args, where, message):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(tiny_scene()))
    out = tmp_path / "out"
    here = [] if "--workers" in args else ["--workers", "1"]
    argv = ["animate", str(path), "-o", str(out)] + here + [str(tmp_path / a) if a.startswith("x.") else a
                                                          for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and where in err[0] and message in err[0], err
    assert not out.exists() or not list(out.glob("frame_*"))


def test_output_folder_must_be_a_folder(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(tiny_scene()))
    (tmp_path / "file").write_text("x")
    assert main(["animate", str(path), "-o", str(tmp_path / "file"), "--workers", "1"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


# ------------------------------------------------------------------------ cluster
@pytest.fixture(scope="module")
def client():
    with local_cluster(2, threads_per_worker=1) as c:
        yield c


def pfm_frames(folder):
    return {p.name: read_pfm(p) for p in sorted(pathlib.Path(folder).glob("frame_*.pfm"))}


def test_cluster_frames_and_tiles_are_bit_identical_to_serial(client, tmp_path):
    opts = dict(frames="0:48:9", format="pfm", **SMALL)
    serial = animate(WALK, tmp_path / "serial", workers=1, **opts)
    farm = animate(WALK, tmp_path / "farm", client=client, chunk=2, **opts)
    tiled = animate(WALK, tmp_path / "tiled", client=client, tiles=3, frames="9:19:9", format="pfm", **SMALL)
    assert serial.rendered == farm.rendered == [0, 9, 18, 27, 36, 45] and tiled.rendered == [9, 18]
    a, b, c = pfm_frames(tmp_path / "serial"), pfm_frames(tmp_path / "farm"), pfm_frames(tmp_path / "tiled")
    assert list(a) == list(b)
    for name in a:
        assert np.array_equal(a[name], b[name]), name
    for name in c:
        assert np.array_equal(a[name], c[name]), name
    assert not np.array_equal(a["frame_0000.pfm"], a["frame_0009.pfm"])


def test_cluster_tiles_of_a_path_traced_still(client, tmp_path):
    """A still split into bands on a cluster reached by its address (--scheduler)."""
    scene = raytrace.load_scene(REPO / "scenes" / "cornell_box.json")
    opts = dict(width=24, height=18, spp=2, seed=3)
    summary = animate(scene, tmp_path, scheduler=client.scheduler.address, tiles=4, format="pfm", **opts)
    assert summary.rendered == [0]
    assert np.array_equal(read_pfm(tmp_path / "frame_0000.pfm"), np.asarray(raytrace.render(scene, **opts)))


def test_a_worker_killed_mid_run_loses_no_frame(client, tmp_path):
    opts = dict(frames="0:12", width=64, height=48, spp=4)
    pids = client.run(os.getpid)
    killed = {}

    def kill_a_busy_worker(k, path):
        if killed:
            return
        busy = [w for w, keys in client.processing().items() if keys and w in pids]
        if busy:
            killed["pid"], killed["tasks"] = pids[busy[0]], client.processing()[busy[0]]
            os.kill(killed["pid"], signal.SIGKILL)

    written = []
    summary = animate(WALK, tmp_path / "farm", client=client, chunk=1,
                      callback=lambda k, p: (written.append(k), kill_a_busy_worker(k, p)), **opts)
    assert killed and killed["tasks"]                      # a worker died with work on it
    with pytest.raises(ProcessLookupError):
        os.kill(killed["pid"], 0)
    assert summary.ok and summary.rendered == list(range(12))
    assert sorted(written) == list(range(12))             # each frame written exactly once
    serial = animate(WALK, tmp_path / "serial", workers=1, **opts)
    assert serial.ok
    for k in range(12):
        name = f"frame_{k:04d}.png"
        assert np.array_equal(iio.imread(tmp_path / "farm" / name), iio.imread(tmp_path / "serial" / name))
    assert leftovers(tmp_path / "farm") == []


class Broken(AnimatedScene):
    """A scene whose frame at t = 1 s raises a plain error (a bug, not bad input)."""

    def scene_at(self, t):
        if t == 1.0:
            raise RuntimeError("boom at 1 s")
        return super().scene_at(t)


def test_failed_tasks_are_reported_and_the_others_finish(client, tmp_path):
    bad_input = tiny_scene(objects={"ball": {"scale": {"keys": [[0, 5], [1, 0.01], [2, 0.01], [3, 5]],
                                                       "interpolation": "catmull_rom"}}})
    summary = animate(bad_input, tmp_path / "a", client=client, chunk=2)
    assert sorted(summary.failed) == [3] and summary.rendered == [0, 1, 2, 4, 5]   # frame 2 shares its task
    assert "animation.objects.ball.scale: interpolates to -0.61375 at t = 1.5 s" in summary.failed[3]
    cloudpickle.register_pickle_by_value(sys.modules[__name__])   # the workers cannot import this file
    try:
        broken = Broken(tiny_scene(), ".")
        summary = animate(broken, tmp_path / "b", client=client, chunk=2)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert summary.failed == {2: "RuntimeError: boom at 1 s", 3: "RuntimeError: boom at 1 s"}
    assert summary.rendered == [0, 1, 4, 5]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [f"frame_{k:04d}.png" for k in (0, 1, 4, 5)]


# ------------------------------------------------------------ the default: here or a cluster
def test_local_plan_starts_a_cluster_only_for_long_work():
    from raytrace.animation.farm import CLUSTER_MIN_SECONDS, local_plan
    assert CLUSTER_MIN_SECONDS == 60.0
    # the README example: 8 light frames (0.15 s each here) -> here
    assert local_plan(7, 0.15, 1, 2) == "here"
    # a slow first frame (kernels and assets loading) is timed again before a cluster starts
    assert local_plan(47, 4.0, 1, 2) == "time"
    assert local_plan(46, 0.24, 2, 2) == "here"
    assert local_plan(46, 3.0, 2, 2) == "cluster"
    # the limit: more than 60 s of work left
    assert local_plan(60, 1.0, 2, 4) == "here" and local_plan(61, 1.0, 2, 4) == "cluster"
    assert local_plan(61, 1.0, 2, 4, min_seconds=100.0) == "here"
    # never for one core or one frame left
    assert local_plan(100, 10.0, 2, 1) == "here"
    assert local_plan(1, 1000.0, 2, 8) == "here" and local_plan(0, 0.0, 1, 8) == "here"


class _Clock:
    """``time`` for the farm and the compile timer: frames take what the test says."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def __getattr__(self, name):
        import time
        return getattr(time, name)


@pytest.fixture
def timed_frames(monkeypatch):
    """Frames rendered here take ``timed_frames.seconds`` each on a fake clock; the
    machine has 2 cores; starting a local cluster fails unless a test allows it."""
    from raytrace.jit import warmup
    from raytrace.animation import farm
    clock = _Clock()
    clock.seconds = 0.1
    clock.here = []
    monkeypatch.setattr(farm, "time", clock)
    monkeypatch.setattr(warmup, "time", clock)
    monkeypatch.setattr(farm.os, "cpu_count", lambda: 2)
    real = farm._run_serial

    def run_serial(anim, todo, *args):
        clock.here.extend(todo)
        real(anim, todo, *args)
        clock.now += clock.seconds * len(todo)
    monkeypatch.setattr(farm, "_run_serial", run_serial)

    def no_cluster(*args):
        raise AssertionError("a local cluster was started")
    monkeypatch.setattr(farm, "_client_for", no_cluster)
    return clock


def test_default_renders_a_small_job_here_and_says_so(tmp_path, timed_frames):
    lines = []
    summary = animate(tiny_scene(), tmp_path, notice=lines.append)
    assert summary.rendered == timed_frames.here == [0, 1, 2, 3, 4, 5]
    assert lines == ["rendering 6 frames here (a local Dask cluster of 2 workers starts only if the rest "
                     "would take over 60 s)"]
    lines.clear()
    timed_frames.seconds = 9.0                # 5 frames left x 9 s: 45 s, under a minute
    animate(tiny_scene(), tmp_path, notice=lines.append, force=True)
    assert len(lines) == 1 and timed_frames.here[6:] == [0, 1, 2, 3, 4, 5]
    assert animate(tiny_scene(), tmp_path, notice=lines.append).skipped == [0, 1, 2, 3, 4, 5]
    assert len(lines) == 1                    # nothing to render: nothing to say


def test_cli_says_where_the_frames_render(tmp_path, timed_frames, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(tiny_scene()))
    assert main(["animate", str(path), "-o", str(tmp_path / "f"), "--frames", "0:3"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("raytrace: rendering 3 frames here (a local Dask cluster of 2 workers starts only if "
                      "the rest would take over 60 s)")
    assert main(["animate", str(path), "-o", str(tmp_path / "g"), "--frames", "0:3", "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["animate", str(path), "-o", str(tmp_path / "h"), "--frames", "0:3", "--workers", "1"]) == 0
    assert capsys.readouterr().err.splitlines()[0] == "raytrace: rendering 3 frames here"


def test_default_starts_a_cluster_for_the_rest_of_a_long_job(client, tmp_path, timed_frames, monkeypatch):
    """Two frames timed here at 20 s each: 4 left, 80 s of work: the rest goes to a local
    cluster (the module's), and the frames are those of a serial run."""
    import contextlib

    from raytrace.animation import farm
    started = []

    @contextlib.contextmanager
    def client_for(given, scheduler, workers, threads, connect_timeout=None):
        started.append((given, scheduler, workers, threads))
        yield client
    monkeypatch.setattr(farm, "_client_for", client_for)
    timed_frames.seconds = 20.0
    lines = []
    summary = animate(tiny_scene(), tmp_path / "auto", notice=lines.append, format="pfm", frames="0:6")
    assert summary.rendered == [0, 1, 2, 3, 4, 5] and timed_frames.here == [0, 1]
    assert started == [(None, None, 2, 1)]
    assert lines[-1] == "starting a local Dask cluster with 2 workers for the other 4 frames (about 80 s of work here)..."
    serial = tmp_path / "serial"
    animate(tiny_scene(), serial, workers=1, format="pfm", frames="0:6")
    a, b = pfm_frames(serial), pfm_frames(tmp_path / "auto")
    assert list(a) == list(b) and all(np.array_equal(a[n], b[n]) for n in a)


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_videos_get_the_mode_of_every_other_output(tmp_path, umask):
    import stat
    old = os.umask(umask)
    try:
        summary = animate(tiny_scene(), tmp_path / "f", workers=1, frames="0:2", gif=tmp_path / "v.gif",
                          mp4=tmp_path / "v.mp4")
    finally:
        os.umask(old)
    mode = stat.S_IMODE(os.stat(summary.paths[0]).st_mode)
    assert mode == 0o666 & ~umask
    assert stat.S_IMODE(os.stat(tmp_path / "v.gif").st_mode) == mode
    assert stat.S_IMODE(os.stat(tmp_path / "v.mp4").st_mode) == mode
