"""Partial images (``--write-partial``): the image of the passes done, written atomically
while the render runs, so the file is always complete, even when the process is killed."""
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np

import raytrace
from raytrace.cli import main
from raytrace.film import partial as partial_mod
from raytrace.kernels.path import mean_and_variance, new_buffers
from raytrace.integrators import add_pass as render_path_pass
from raytrace.renderer import resolve_settings

REPO = pathlib.Path(__file__).resolve().parents[1]
CORNELL = REPO / "scenes" / "cornell_box.json"


def test_partial_images_are_the_passes_done():
    scene = raytrace.load_scene(CORNELL)
    seen = []
    final = raytrace.render(scene, width=16, height=12, spp=5, partial=seen.append, partial_seconds=0)
    assert [img.info.spp for img in seen] == [1, 2, 3, 4]           # the final pass is the final image
    settings = resolve_settings(scene, {"width": 16, "height": 12, "spp": 5})
    buffers = new_buffers(12, 16)
    for img in seen:           # each is the mean of the render's passes so far, added one by one here
        render_path_pass(scene, settings, buffers, img.info.spp - 1)
        expected = mean_and_variance(buffers[0], img.info.spp)[0].astype(np.float32)
        assert np.array_equal(np.asarray(img), expected)
    assert final.info.spp == 5
    # with a power of two of spp the passes so far are also a render asked for that many
    # (Sobol points throughout; 5 puts the pixel positions on a 5-point multi-jittered
    # pattern, and a 1-spp render goes through the pixel centres)
    seen8 = []
    raytrace.render(scene, width=16, height=12, spp=8, partial=seen8.append, partial_seconds=0)
    powers = [img for img in seen8 if img.info.spp in (2, 4)]
    assert len(powers) == 2
    for img in powers:
        alone = raytrace.render(scene, width=16, height=12, spp=img.info.spp)
        assert np.array_equal(np.asarray(img), np.asarray(alone))
    slow = []
    raytrace.render(scene, width=16, height=12, spp=5, partial=slow.append, partial_seconds=3600)
    assert slow == []


def test_cli_partial_files_are_complete_while_rendering(tmp_path, monkeypatch):
    out = tmp_path / "p.exr"
    checks = []
    original = partial_mod.PartialWriter.__call__

    def checked(self, image):
        original(self, image)
        layers, meta = raytrace.read_exr(out)            # complete and readable at every step
        others = [p.name for p in tmp_path.iterdir() if p != out]
        checks.append((meta["spp"], layers["color"].shape, others))
    monkeypatch.setattr(partial_mod.PartialWriter, "__call__", checked)
    assert main(["render", str(CORNELL), "-o", str(out), "--size", "16", "12", "--spp", "4",
                 "--aov", "albedo", "--write-partial", "0", "-q"]) == 0
    assert checks == [(1, (12, 16, 3), []), (2, (12, 16, 3), []), (3, (12, 16, 3), [])]
    layers, meta = raytrace.read_exr(out)
    assert meta["spp"] == 4 and set(layers) == {"color", "albedo"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.exr"]


def test_a_failing_partial_write_warns_once_and_the_render_goes_on(tmp_path, monkeypatch, capsys):
    def fail(path, data):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(partial_mod, "write_bytes_atomic", fail)
    out = tmp_path / "p.png"
    assert main(["render", str(CORNELL), "-o", str(out), "--size", "16", "12", "--spp", "4",
                 "--write-partial", "0", "-q"]) == 0
    err = capsys.readouterr().err
    assert err.count("cannot write the partial image") == 1 and "No space left on device" in err
    assert out.exists()


def _spp_written(path):
    """The passes in the partial image at ``path`` (None while there is none yet; once
    there, it is only ever replaced whole)."""
    return raytrace.read_exr(path)[1]["spp"] if path.exists() else None


def test_killed_render_leaves_a_complete_partial_image(tmp_path):
    """SIGKILL at a random moment: the file on disk is a whole image of some passes.

    The kill comes once the file has been replaced at least twice after it first
    appeared (the passes it holds went up twice), however long the process took to
    start, compile and render them; each version read on the way must be a whole image
    too. The deadline only keeps a broken render from hanging the test."""
    out = tmp_path / "k.exr"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "raytrace", "render", str(CORNELL), "-o", str(out),
                             "--size", "64", "64", "--spp", "60000", "--write-partial", "0", "-q"],
                            env=env, stderr=subprocess.PIPE)
    seen = []                                        # the distinct spp counts read, in order
    try:
        deadline = time.monotonic() + 900            # a cold compile on a busy machine: minutes
        while len(seen) < 3 and time.monotonic() < deadline and proc.poll() is None:
            spp = _spp_written(out)
            if spp is not None and (not seen or spp != seen[-1]):
                seen.append(spp)
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert len(seen) == 3, (seen, proc.returncode, proc.stderr.read().decode())
    assert seen == sorted(seen)                      # each replacement holds more passes
    layers, meta = raytrace.read_exr(out)
    assert seen[-1] <= meta["spp"] < 60000 and meta["spp_requested"] == 60000
    assert layers["color"].shape == (64, 64, 3) and np.isfinite(layers["color"]).all()
    leftovers = [p.name for p in tmp_path.iterdir() if p != out]
    assert all(name.startswith(".k.exr.") and name.endswith(".tmp") for name in leftovers)   # at most a temporary
