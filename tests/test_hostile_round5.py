"""Hostile input, fifth round (issue 43, "the new readers"): environment maps and medium
grids that claim little and hold much, or are no files at all.

Each row of the issue's first table gives one line naming the user's file and the field
(or what the path is), exit status 2, no image written, within a second of reading; each
test has a negative control (a valid input of the same kind still loads):

- a valid 4 x 3 ``.hdr`` / ``.exr`` followed by a sparse hole to 20 GiB: refused from
  the file's length against its header, before it is read;
- an EXR map whose R channel is subsampled (xSampling 2);
- a ``.npy`` header whose shape is ``(1+1+...+1, 1, 1)`` or ``(-----...1, 1, 1)``: parsed
  as plain values, never by ``literal_eval`` (RecursionError, MemoryError);
- strings among a grid's ``data``;
- a missing grid file of a medium that nothing uses;
- a grid or map path that is a folder, a FIFO (never opened: it would block) or a link
  to ``/dev/zero``;
- a black PNG of exactly 2^26 pixels as an environment map (6.86 GB peak before): refused
  with the budget in the message, and a map at the new limit (2^25 texels) builds its
  environment within 2.5 GiB of address space.
"""
import json
import os
import resource
import subprocess
import sys
import time
import zlib

import numpy as np
import pytest

import raytrace
from raytrace.envmap import BYTES_PER_TEXEL, MAX_TEXELS, hdr_bytes, read_environment_image
from raytrace.errors import SceneError
from raytrace.film.exr import exr_bytes, read_exr
from raytrace.scene.volgrid import write_vol

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
HOLE = 20 * 2 ** 30            # bytes: a valid image, then a sparse hole to 20 GiB


# ---------------------------------------------------------------- helpers
def _sky():
    return np.random.default_rng(43).random((3, 4, 3)).astype(np.float32) * 2


def _env_scene(folder, name, **background):
    path = folder / "scene.json"
    path.write_text(json.dumps({
        "camera": {"center": [0, 0, 4], "look_at": [0, 0, 0]}, "image": {"width": 4, "height": 4},
        "integrator": {"type": "path", "max_depth": 2}, "background": {"envmap": name, **background},
        "objects": [{"type": "sphere"}]}))
    return path


def _media_scene(folder, spec, used=True):
    scene = {"camera": {"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 30},
             "image": {"width": 4, "height": 4}, "integrator": {"type": "path", "max_depth": 4},
             "background": {"color": [0.5, 0.5, 0.5]},
             "media": {"smoke": {"type": "heterogeneous", "sigma_t": spec, "albedo": 0.8}},
             "objects": [{"type": "sphere"}]}
    if used:
        scene["materials"] = {"boundary": {"type": "null"}}
        scene["objects"] = [{"type": "cube", "material": "boundary", "interior": "smoke"}]
    path = folder / "scene.json"
    path.write_text(json.dumps(scene))
    return path


def _environment(scene_path):
    """The scene's Environment (reads the map; no kernel is compiled for it)."""
    return raytrace.load_scene(scene_path).environment


def _refused(call, *words):
    """``call()`` raises one SceneError whose one line holds every one of ``words``."""
    with pytest.raises(SceneError) as exc:
        call()
    line = str(exc.value)
    assert "\n" not in line, line
    for word in words:
        assert word in line, f"{word!r} not in {line!r}"
    return line


def _cli(folder, scene, timeout=120):
    """``python -m raytrace render scene.json -o out.png`` in ``folder``, in a real process
    -> stderr; asserts status 2, one line, no traceback and no image written."""
    out = folder / "out.png"
    r = subprocess.run([sys.executable, "-m", "raytrace", "render", scene.name, "-o", out.name, "--quiet"],
                       cwd=folder, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("raytrace: error: "), r.stderr
    assert not out.exists()
    print(r.stderr.strip())
    return r.stderr


def _with_hole(path, data):
    with open(path, "wb") as f:
        f.write(data)
        f.truncate(HOLE)              # sparse: costs no disk
    return path


def _timed(call):
    t = time.perf_counter()
    try:
        call()
    except SceneError as exc:
        return time.perf_counter() - t, str(exc)
    raise AssertionError("accepted")


# ---------------------------------------------------------------- 1, 2: a hole to 20 GiB
def test_hdr_with_a_hole_to_20_gib_is_refused_from_its_length(tmp_path):
    good = hdr_bytes(_sky())
    (tmp_path / "ok.hdr").write_bytes(good)
    env = _environment(_env_scene(tmp_path, "ok.hdr"))                  # negative control
    assert env.texels.shape == (1, 3, 4, 3)
    (tmp_path / "ok_tail.hdr").write_bytes(good + bytes(64))            # a few stray bytes: fine
    assert read_environment_image(tmp_path / "ok_tail.hdr", "background.envmap").shape == (3, 4, 3)

    _with_hole(tmp_path / "sky.hdr", good)
    seconds, line = _timed(lambda: read_environment_image(tmp_path / "sky.hdr", "background.envmap"))
    assert seconds < 1.0, seconds
    for word in ("sky.hdr", "background.envmap", "20.0 GiB", "4 x 3 pixels"):
        assert word in line, line
    err = _cli(tmp_path, _env_scene(tmp_path, "sky.hdr"))
    assert "scene.json: background.envmap: environment map sky.hdr: the file has 20.0 GiB" in err, err


def test_exr_with_a_hole_to_20_gib_is_refused_from_its_length(tmp_path):
    good = exr_bytes({"color": _sky()})
    (tmp_path / "ok.exr").write_bytes(good)
    env = _environment(_env_scene(tmp_path, "ok.exr"))                  # negative control
    np.testing.assert_array_equal(env.texels[0], _sky())

    _with_hole(tmp_path / "sky.exr", good)
    seconds, line = _timed(lambda: read_environment_image(tmp_path / "sky.exr", "background.envmap"))
    assert seconds < 1.0, seconds
    for word in ("sky.exr", "background.envmap", "20.0 GiB", "4 x 3 pixels"):
        assert word in line, line
    # the same check for every EXR reader (compare, merge, read_exr)
    _refused(lambda: read_exr(tmp_path / "sky.exr"), "sky.exr", "20.0 GiB")
    err = _cli(tmp_path, _env_scene(tmp_path, "sky.exr"))
    assert "environment map sky.exr: the file has 20.0 GiB" in err, err


# ---------------------------------------------------------------- 3: a subsampled channel
def _exr_with_r_sampling(path, xs):
    import OpenEXR
    img = _sky()
    img = np.concatenate([img, img[:1]])          # 4 x 4
    chans = {c: OpenEXR.Channel(c, np.ascontiguousarray(img[..., k]), xs if c == "R" else 1, 1)
             for k, c in enumerate("RGB")}
    with OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}, chans) as f:
        f.write(str(path))
    return img


def test_exr_with_a_subsampled_channel_is_refused(tmp_path):
    pytest.importorskip("OpenEXR")
    img = _exr_with_r_sampling(tmp_path / "ok.exr", 1)                   # negative control
    np.testing.assert_array_equal(read_environment_image(tmp_path / "ok.exr", "background.envmap"), img)

    _exr_with_r_sampling(tmp_path / "sub.exr", 2)
    line = _refused(lambda: read_environment_image(tmp_path / "sub.exr", "background.envmap"),
                    "background.envmap", "sub.exr", "channel 'R' is subsampled (xSampling 2, ySampling 1)")
    assert "ValueError" not in line
    _refused(lambda: read_exr(tmp_path / "sub.exr"), "sub.exr: channels: channel 'R' is subsampled")
    err = _cli(tmp_path, _env_scene(tmp_path, "sub.exr"))
    assert "sub.exr" in err and "subsampled" in err, err


# ---------------------------------------------------------------- 4: .npy header expressions
def _npy_with_shape(path, shape_text):
    head = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s, 1, 1), }" % shape_text
    head += " " * (63 - (len(head) + 12) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x02\x00" + len(head).to_bytes(4, "little") + head.encode("latin-1"))
        f.write(np.ones(2, "<f4").tobytes())
    return path


@pytest.mark.parametrize("expression", ["+".join(["1"] * 4500), "-" * 9000 + "2"], ids=["sum", "minus"])
def test_npy_header_expressions_are_refused_without_evaluating_them(expression, tmp_path):
    _npy_with_shape(tmp_path / "ok.npy", "2")                           # negative control: (2, 1, 1)
    scene = raytrace.load_scene(_media_scene(tmp_path, {"type": "grid", "file": "ok.npy"}))
    assert scene.media is not None
    np.save(tmp_path / "saved.npy", np.ones((2, 3, 4), np.float32))     # and NumPy's own files
    _media_scene(tmp_path, {"type": "grid", "file": "saved.npy"})
    assert raytrace.load_scene(tmp_path / "scene.json").media is not None

    _npy_with_shape(tmp_path / "g.npy", expression)
    scene = _media_scene(tmp_path, {"type": "grid", "file": "g.npy"})
    seconds, line = _timed(lambda: raytrace.load_scene(scene))
    assert "g.npy: header: 'shape' must be a tuple of at most 32 plain integers" in line, line
    assert seconds < 5.0, seconds                  # a BVH may compile on a cold cache
    if expression.startswith("1"):
        err = _cli(tmp_path, scene)
        assert "g.npy: header: 'shape'" in err and "RecursionError" not in err, err


# ---------------------------------------------------------------- 5: strings for numbers
def test_strings_in_grid_data_are_refused(tmp_path):
    numbers = _media_scene(tmp_path, {"type": "grid", "data": [[[0.5, 1], [2, 1]]]})
    assert raytrace.load_scene(numbers).media is not None               # negative control

    scene = _media_scene(tmp_path, {"type": "grid", "data": [[["0.5", "1"], ["2", "1"]]]})
    _refused(lambda: raytrace.load_scene(scene), "scene.json", "media.smoke.sigma_t.data",
             "must hold numbers, got '0.5' at [0][0][0]")
    err = _cli(tmp_path, scene)
    assert "scene.json: media.smoke.sigma_t.data: must hold numbers, got '0.5'" in err, err
    for data, word in (([[[0.5, True]]], "got True at [0][0][1]"), ([[[0.5, None]]], "got None")):
        s = _media_scene(tmp_path, {"type": "grid", "data": data})
        _refused(lambda: raytrace.load_scene(s), "media.smoke.sigma_t.data", word)


# ---------------------------------------------------------------- 6: an unused medium
def test_missing_grid_of_an_unused_medium_is_refused(tmp_path):
    write_vol(tmp_path / "s.vol", np.ones((2, 2, 2), np.float32))
    ok = raytrace.load_scene(_media_scene(tmp_path, {"type": "grid", "file": "s.vol"}, used=False))
    assert ok.media is None                                             # negative control: not used, loads

    scene = _media_scene(tmp_path, {"type": "grid", "file": "gone.vol"}, used=False)
    _refused(lambda: raytrace.load_scene(scene), "scene.json", "media.smoke.sigma_t.file",
             "file not found", "gone.vol")
    (tmp_path / "bad.vol").write_bytes(b"VOL\x02" + bytes(60))         # and a broken one
    scene = _media_scene(tmp_path, {"type": "grid", "file": "bad.vol"}, used=False)
    _refused(lambda: raytrace.load_scene(scene), "bad.vol", "version")


# ---------------------------------------------------------------- 7: folders, FIFOs, devices
KINDS = {
    "folder": (lambda p: p.mkdir(), "is a folder, not a file"),
    "fifo": (lambda p: os.mkfifo(p), "is not a regular file (a FIFO)"),
    "dev-zero": (lambda p: os.symlink("/dev/zero", p),
                 "is not a regular file (a link to /dev/zero, a character device)"),
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("target", ["grid.vol", "grid.npy", "sky.hdr", "sky.exr", "sky.png"])
def test_paths_that_are_not_files_say_what_they_are(kind, target, tmp_path):
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    make, words = KINDS[kind]
    grid = target.startswith("grid")
    field = "media.smoke.sigma_t.file" if grid else "background.envmap"
    what = "grid" if grid else "environment map"
    # negative control: a regular file there, and a link to one, load
    real = tmp_path / ("real" + target[target.index("."):])
    if target.endswith(".vol"):
        write_vol(real, np.ones((2, 2, 2), np.float32))
    elif target.endswith(".npy"):
        np.save(real, np.ones((2, 2, 2), np.float32))
    elif target.endswith(".hdr"):
        real.write_bytes(hdr_bytes(_sky()))
    elif target.endswith(".exr"):
        real.write_bytes(exr_bytes({"color": _sky()}))
    else:
        import imageio.v3 as iio
        iio.imwrite(real, (np.ones((3, 4, 3)) * 128).astype(np.uint8))
    os.symlink(real.name, tmp_path / target)
    scene = (_media_scene(tmp_path, {"type": "grid", "file": target}) if grid else _env_scene(tmp_path, target))
    if grid:
        assert raytrace.load_scene(scene).media is not None
    else:
        assert _environment(scene).texels.shape == (1, 3, 4, 3)
    (tmp_path / target).unlink()

    make(tmp_path / target)
    if kind == "fifo":                # in a real process: a reader that opened it would block
        err = _cli(tmp_path, scene, timeout=60)
        assert f"scene.json: {field}: {what} {target} {words}" in err, err
    else:
        load = (lambda: raytrace.load_scene(scene)) if grid else (lambda: _environment(scene))
        _refused(load, f"scene.json: {field}: {what} ", f"{target} {words}")


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_cube_map_face_that_is_not_a_file_says_what_it_is(kind, tmp_path):
    """A cube map's face named like a face but a folder, a FIFO or a link to /dev/zero:
    its one line says what it is (not "face missing"). Control: the six faces as PNGs load."""
    import imageio.v3 as iio
    from raytrace.cubemap import FACES
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    make, words = KINDS[kind]
    sky = tmp_path / "sky"
    sky.mkdir()
    for name in FACES:
        iio.imwrite(sky / f"{name}.png", (np.ones((4, 4, 3)) * 128).astype(np.uint8))
    scene = _env_scene(tmp_path, None)
    data = json.loads(scene.read_text())
    data["background"] = {"cube_map": "sky"}
    scene.write_text(json.dumps(data))
    assert _environment(scene).texels.shape == (6, 4, 4, 3)
    (sky / f"{FACES[2]}.png").unlink()
    make(sky / f"{FACES[2]}.png")
    if kind == "fifo":                # in a real process: a reader that opened it would block
        err = _cli(tmp_path, scene, timeout=60)
        assert f"scene.json: background.cube_map: " in err and f"{FACES[2]}.png {words}" in err, err
    else:
        _refused(lambda: _environment(scene), "scene.json: background.cube_map: ", f"{FACES[2]}.png {words}")


def test_read_exr_says_what_a_path_is(tmp_path):
    (tmp_path / "ok.exr").write_bytes(exr_bytes({"color": _sky()}))
    assert read_exr(tmp_path / "ok.exr")[0]["color"].shape == (3, 4, 3)  # negative control
    (tmp_path / "d.exr").mkdir()
    _refused(lambda: read_exr(tmp_path / "d.exr"), "d.exr: is a folder, not an EXR file")
    os.symlink("/dev/zero", tmp_path / "z.exr")
    _refused(lambda: read_exr(tmp_path / "z.exr"), "z.exr: is not a regular file", "character device")
    _refused(lambda: read_exr(tmp_path / "missing.exr"), "missing.exr: file not found")


# ---------------------------------------------------------------- 8: memory of a big map
def _black_png(path, width, height):
    """An 8-bit RGB black PNG, compressed a row at a time (2^26 pixels: about 200 KB)."""
    import struct

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    z = zlib.compressobj(9)
    row = bytes(1 + 3 * width)
    parts = [z.compress(row) for _ in range(height)] + [z.flush()]
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", b"".join(parts)) + chunk(b"IEND", b""))
    return path


_UNDER_A_LIMIT = """
import resource, sys
import raytrace
from raytrace.errors import SceneError
try:
    env = raytrace.load_scene(sys.argv[1]).environment
except SceneError as exc:
    print("refused:", exc)
    sys.exit(2)
print("texels", env.texels.shape, "peak", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""
AS_LIMIT = int(2.5 * 2 ** 30)


def _under_limit(scene):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    env = dict(os.environ, MALLOC_ARENA_MAX="2", NUMBA_NUM_THREADS="2", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", _UNDER_A_LIMIT, scene.name], cwd=scene.parent, capture_output=True,
                          text=True, timeout=300, preexec_fn=limit, env=env)


def test_an_environment_map_stays_within_its_memory_budget(tmp_path):
    """The issue's 200 KB black PNG of 2^26 pixels (6.86 GB peak before) is refused from
    its header with the budget in the line; a map at the new limit, 2^25 texels, builds
    its environment (texels and sampling tables) in a process held to 2.5 GiB of address
    space, with a peak under 2 GB."""
    assert MAX_TEXELS == 2 ** 25 and BYTES_PER_TEXEL * MAX_TEXELS <= 1.6 * 2 ** 30
    big = _black_png(tmp_path / "big.png", 8192, 8192)
    assert big.stat().st_size < 400_000
    r = _under_limit(_env_scene(tmp_path, "big.png"))
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr[-2000:])
    assert ("scene.json: background.envmap: environment map big.png declares 8192 x 8192 pixels, more than "
            f"the limit of {2 ** 25} pixels (3.0 GiB of memory to read at 48 bytes a pixel)") in r.stdout, r.stdout
    err = _cli(tmp_path, _env_scene(tmp_path, "big.png"))
    assert "big.png declares 8192 x 8192 pixels" in err and "48 bytes a pixel" in err, err

    _black_png(tmp_path / "limit.png", 8192, 4096)                     # negative control: at the limit
    r = _under_limit(_env_scene(tmp_path, "limit.png"))
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    words = r.stdout.split()
    assert "(1, 4096, 8192, 3)" in r.stdout, r.stdout
    peak = int(words[words.index("peak") + 1])
    print(f"peak {peak / 2 ** 30:.2f} GiB for 2^25 texels")
    assert peak < 2e9, peak
