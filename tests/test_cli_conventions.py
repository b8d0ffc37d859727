"""The raytrace command line: exit codes (2 bad input, 1 I/O, 130 Ctrl-C), defaults and
exit codes in --help, the first-compile notice, outputs written all or nothing."""
import errno
import io
import json
import subprocess
import sys

import numpy as np
import pytest

import raytrace
from raytrace import cli
from raytrace.jit import warmup
from userio import outputs as uoutputs

SCENE = {
    "camera": {"center": [0, 0, 5], "direction": [0, 0, -1], "fov": 40},
    "image": {"width": 8, "height": 6},
    "materials": {"red": {"diffuse": [1, 0, 0]}},
    "lights": [{"type": "point", "position": [0, 5, 5], "color": [1, 1, 1]}],
    "objects": [{"type": "sphere", "radius": 1, "material": "red"}],
}


@pytest.fixture
def scene_file(tmp_path):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(SCENE))
    return path


def test_help_shows_defaults_and_exit_codes():
    r = subprocess.run([sys.executable, "-m", "raytrace", "render", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert "(default: srgb)" in text
    assert "exit status: 0 success, 1 I/O failure" in text and "2 bad input" in text and "130 interrupted" in text
    assert "(default: None)" not in text          # options that mean "the scene's value"


def test_bad_option_is_one_line_with_status_2(scene_file, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["render", str(scene_file), "-o", "x.png", "--spp", "many"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--spp: invalid int value" in err


def test_io_failure_exits_1_and_names_the_users_file(scene_file, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out.png"

    def full_disk(tmp, path):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(uoutputs, "os", _OsWithReplace(full_disk))
    assert cli.main(["render", str(scene_file), "-o", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err == f"raytrace: error: {out}: No space left on device\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scene.json"]     # no temporary left


class _OsWithReplace:
    """The os module with ``replace`` swapped for a failing one."""

    def __init__(self, replace):
        import os
        self._os = os
        self.replace = replace

    def __getattr__(self, name):
        return getattr(self._os, name)


def test_a_failing_second_output_keeps_every_old_file(scene_file, tmp_path, capsys):
    out = tmp_path / "out.png"
    out.write_bytes(b"old image")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    status = cli.main(["render", str(scene_file), "-o", str(out), "--normals", str(blocker / "n.png"), "--quiet"])
    assert status == 2
    assert out.read_bytes() == b"old image"
    assert "--normals" in capsys.readouterr().err


def test_output_to_a_folder_names_the_users_path(scene_file, tmp_path, capsys):
    folder = tmp_path / "out.png"
    folder.mkdir()
    assert cli.main(["render", str(scene_file), "-o", str(folder), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == f"raytrace: error: {folder}: -o: is a folder, not a file name\n"


def test_compile_notice_when_the_kernels_are_not_cached(scene_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(warmup, "is_cached", lambda kind, media=False: False)
    monkeypatch.setattr(warmup, "start", lambda kind, instanced=False, media=False: None)
    compiled = []
    monkeypatch.setattr(warmup, "compile_here", lambda kind, instanced=False, media=False: compiled.append((kind, instanced)))
    assert cli.main(["render", str(scene_file), "-o", str(tmp_path / "o.png")]) == 0
    err = capsys.readouterr().err
    assert "raytrace: compiling kernels ...\n" in err and "kernels compiled in" in err
    assert compiled == [("whitted", False)]
    # warm: no notice
    monkeypatch.setattr(warmup, "is_cached", lambda kind, media=False: True)
    assert cli.main(["render", str(scene_file), "-o", str(tmp_path / "o.png")]) == 0
    assert "compiling" not in capsys.readouterr().err


def test_compile_notice_ticks_on_a_terminal():
    """On a terminal the notice rewrites its line with the seconds so far, then erases it
    and says how long compiling took. The block lasts until a tick of at least 1 s has
    been written (however late the ticker runs on a busy machine); the figures printed
    must agree with a clock read here around the block."""
    import re
    import time

    class Tty(io.StringIO):
        def isatty(self):
            return True
    stream = Tty()
    tick = re.compile(r"\r\x1b\[Kraytrace: compiling kernels (\d+) s")
    t0 = time.perf_counter()
    with warmup.CompileNotice(True, stream=stream) as notice:
        deadline = t0 + 120
        while not any(int(n) >= 1 for n in tick.findall(stream.getvalue())):
            assert time.perf_counter() < deadline, f"no tick of 1 s or more: {stream.getvalue()!r}"
            time.sleep(0.02)
    elapsed = time.perf_counter() - t0
    text = stream.getvalue()
    ticks = [int(n) for n in tick.findall(text)]
    assert ticks == sorted(ticks) and ticks[-1] >= 1, text
    done = re.fullmatch(r"(?:\r[^\r]*?\d+ s)+\r\033\[Kraytrace: kernels compiled in (\d+\.\d) s\n", text)
    assert done, repr(text)
    seconds = float(done.group(1))
    assert notice.seconds == pytest.approx(seconds, abs=0.05)
    assert ticks[-1] - 0.5 <= notice.seconds <= elapsed     # a tick rounds the seconds so far


def test_renderer_keeps_its_caches_off_the_scene(tmp_path):
    scene = raytrace.load_scene(dict(SCENE, integrator={"type": "path"}))
    before = set(vars(scene))
    raytrace.render(scene, width=4, height=4)
    assert set(vars(scene)) == before


def test_rendered_image_reports_what_made_it():
    scene = raytrace.load_scene(dict(SCENE, integrator={"type": "path"}))
    image = raytrace.render(scene, width=5, height=4, spp=3, seed=7)
    assert image.shape == (4, 5, 3) and image.dtype == np.float32
    info = image.info
    assert (info.integrator, info.width, info.height, info.spp, info.spp_requested, info.seed) == \
        ("path", 5, 4, 3, 3, 7)
    assert info.nonfinite == 0
    assert type(image * 2) is np.ndarray         # arithmetic gives plain arrays
