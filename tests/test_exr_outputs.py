"""EXR files and AOV outputs: exact float round trips, half precision, an independent
reader (OpenImageIO), and where ``raytrace render --aov`` puts each AOV."""
import pathlib

import numpy as np
import pytest

import raytrace
from raytrace.cli import main
from raytrace.film import aov_files
from raytrace.film.exr import HALF_MAX, exr_bytes, read_exr
from raytrace.image import RenderedImage, RenderInfo, read_pfm

REPO = pathlib.Path(__file__).resolve().parents[1]
CORNELL = REPO / "scenes" / "cornell_box.json"
SMALL = ["--size", "20", "16", "--spp", "2", "--seed", "5", "-q"]
ALL_AOVS = "albedo,normal,depth,position,uv,object_id,material_id,samples"


def synthetic(h=6, w=9, seed=0):
    """A render-like image with every AOV, wide ranges, misses (inf depth, id -1)."""
    rng = np.random.default_rng(seed)
    img = RenderedImage(rng.lognormal(0.0, 3.0, (h, w, 3)), RenderInfo("path", w, h, 8, 8, 2 ** 40, 1, 0.25))
    hit = rng.random((h, w)) > 0.3
    img.aovs = {"albedo": rng.random((h, w, 3)).astype(np.float32),
                "normal": rng.normal(size=(h, w, 3)).astype(np.float32),
                "depth": np.where(hit, rng.random((h, w)) * 1e4, np.inf).astype(np.float32),
                "position": rng.normal(0, 100, (h, w, 3)).astype(np.float32),
                "uv": rng.random((h, w, 2)).astype(np.float32),
                "object_id": np.where(hit, rng.integers(0, 70000, (h, w)), -1).astype(np.int32),
                "material_id": np.where(hit, rng.integers(0, 3, (h, w)), -1).astype(np.int32),
                "samples": rng.integers(0, 9, (h, w)).astype(np.int32)}
    return img


def test_float_round_trip_is_exact(tmp_path):
    img = synthetic()
    path = tmp_path / "a.exr"
    raytrace.save_exr(path, img)
    layers, meta = raytrace.read_exr(path)
    assert set(layers) == {"color"} | set(img.aovs)
    assert np.array_equal(layers["color"], np.asarray(img, np.float32))
    for name, a in img.aovs.items():
        assert layers[name].dtype == a.dtype and layers[name].shape == a.shape, name
        assert np.array_equal(layers[name], a), name
    assert meta["spp"] == 8 and meta["nonfinite"] == 1 and meta["integrator"] == "path"
    assert int(meta["seed"]) == 2 ** 40          # beyond 32 bits: stored as a string, exact


def test_half_is_within_half_precision(tmp_path):
    img = synthetic(seed=1)
    img[0, 0] = [1e6, -1e6, 65504.0]              # beyond the half range: clamped, not inf
    path = tmp_path / "h.exr"
    path.write_bytes(aov_files.encode_color(path, img, {}, half=True, aovs=img.aovs))
    layers, _ = raytrace.read_exr(path)
    ref = np.asarray(img, np.float64)
    got = layers["color"].astype(np.float64)
    assert got[0, 0].tolist() == [HALF_MAX, -HALF_MAX, HALF_MAX]
    ok = np.abs(ref) <= HALF_MAX
    tiny = np.abs(ref) < 2.0 ** -14                # half subnormals: absolute precision 2^-24
    rel = np.abs(got - ref) / np.abs(ref)
    assert (rel[ok & ~tiny] <= 2.0 ** -11).all()
    assert (np.abs(got - ref)[tiny] <= 2.0 ** -25).all()
    # not float32: the rounding is really there (negative control)
    assert (rel[ok & ~tiny] > 2.0 ** -20).mean() > 0.9
    depth = img.aovs["depth"]
    assert np.array_equal(np.isinf(layers["depth"]), np.isinf(depth))
    fin = np.isfinite(depth)
    assert (np.abs(layers["depth"][fin] - depth[fin]) <= depth[fin] * 2.0 ** -11).all()
    for name in ("object_id", "material_id", "samples"):      # integers stay exact
        assert np.array_equal(layers[name], img.aovs[name]), name


def test_openimageio_reads_our_files(tmp_path):
    oiio = pytest.importorskip("OpenImageIO")
    img = synthetic(seed=2)
    for half in (False, True):
        path = tmp_path / f"x{int(half)}.exr"
        path.write_bytes(aov_files.encode_color(path, img, {"spp": 8}, half=half, aovs=img.aovs))
        inp = oiio.ImageInput.open(str(path))
        assert inp, oiio.geterror()
        spec = inp.spec()
        names = list(spec.channelnames)
        pixels = inp.read_image("float")
        assert inp.spec().getattribute("raytrace:spp") == 8
        inp.close()
        ch = {n: pixels[..., k] for k, n in enumerate(names)}
        assert {"R", "G", "B", "albedo.R", "normal.X", "depth.Z", "position.Z", "uv.U", "uv.V",
                "object_id.V", "material_id.V", "samples.V"} <= set(names)
        tol = 2.0 ** -11 if half else 0.0
        colour = np.stack([ch["R"], ch["G"], ch["B"]], axis=-1)
        ref = np.asarray(img, np.float32)
        assert np.all(np.abs(colour - ref) <= tol * np.abs(ref) + (2.0 ** -24 if half else 0.0))
        for name in ("uv.U", "uv.V"):
            ref = img.aovs["uv"][..., "UV".index(name[-1])]
            assert np.all(np.abs(ch[name] - ref) <= tol * np.abs(ref) + (2.0 ** -24 if half else 0.0))
        k = names.index("object_id.V")
        inp = oiio.ImageInput.open(str(path))
        ids = inp.read_image(0, 0, k, k + 1, "uint")[..., 0]         # the UINT channel as it is
        inp.close()
        assert np.array_equal(ids, img.aovs["object_id"] + 1)       # stored + 1, 0 = nothing
        formats = {n: str(f) for n, f in zip(names, spec.channelformats)}
        assert formats["object_id.V"] == "uint" and formats["R"] == ("half" if half else "float")


def test_exr_module_refuses_bad_layers():
    with pytest.raises(ValueError, match="differ in size"):
        exr_bytes({"color": np.zeros((2, 2, 3)), "x": np.zeros((3, 2))})
    with pytest.raises(ValueError, match=r"\(H, W, 1\|2\|3\)"):
        exr_bytes({"color": np.zeros((2, 2, 4))})


def test_unreadable_exr_is_one_line(tmp_path):
    bad = tmp_path / "bad.exr"
    bad.write_bytes(b"not an exr")
    with pytest.raises(raytrace.SceneError, match="cannot read EXR"):
        read_exr(bad)


def test_cli_aov_layers_match_the_api(tmp_path, capsys):
    out = tmp_path / "c.exr"
    assert main(["render", str(CORNELL), "-o", str(out), "--aov", ALL_AOVS, *SMALL]) == 0
    layers, meta = raytrace.read_exr(out)
    scene = raytrace.load_scene(CORNELL)
    api = raytrace.render(scene, width=20, height=16, spp=2, seed=5, aovs=ALL_AOVS.split(","))
    assert np.array_equal(layers["color"], np.asarray(api))
    for name, a in api.aovs.items():
        assert np.array_equal(layers[name], a), name
    assert meta["spp"] == 2 and meta["seed"] == 5 and meta["scene"] == "cornell_box.json"
    assert meta["object_names"].startswith("[") and "light" in meta["object_names"]
    assert meta["scene_hash"] == aov_files.scene_hash(scene) and meta["filter"] == "gaussian"


def test_cli_aov_files_beside_png_and_pfm(tmp_path):
    png = tmp_path / "c.png"
    assert main(["render", str(CORNELL), "-o", str(png), "--aov", "albedo,uv,object_id", *SMALL]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.albedo.exr", "c.object_id.exr", "c.png", "c.uv.exr"]
    api = raytrace.render(raytrace.load_scene(CORNELL), width=20, height=16, spp=2, seed=5,
                          aovs=["albedo", "uv", "object_id", "depth"])
    assert np.array_equal(raytrace.read_exr(tmp_path / "c.uv.exr")[0]["uv"], api.aovs["uv"])
    assert np.array_equal(raytrace.read_exr(tmp_path / "c.object_id.exr")[0]["object_id"], api.aovs["object_id"])
    pfm = tmp_path / "p" / "c.pfm"
    assert main(["render", str(CORNELL), "-o", str(pfm), "--aov", "depth,object_id,uv", *SMALL]) == 0
    assert np.array_equal(read_pfm(pfm.parent / "c.depth.pfm"), api.aovs["depth"])
    assert np.array_equal(read_pfm(pfm.parent / "c.object_id.pfm"), api.aovs["object_id"] + 1.0)
    uv = read_pfm(pfm.parent / "c.uv.pfm")
    assert np.array_equal(uv[..., :2], api.aovs["uv"]) and (uv[..., 2] == 0).all()
    exr = tmp_path / "s" / "c.exr"
    assert main(["render", str(CORNELL), "-o", str(exr), "--aov", "depth", "--aov-files", "--exr-half", *SMALL]) == 0
    layers, _ = raytrace.read_exr(exr)
    assert set(layers) == {"color"} and layers["color"].dtype == np.float32       # read back as float32
    assert set(raytrace.read_exr(exr.parent / "c.depth.exr")[0]) == {"depth"}


@pytest.mark.parametrize("extra, message", [
    (["--aov", "colour"], "--aov: unknown AOV 'colour'"),
    (["--aov", ","], "--aov: needs a comma-separated list"),
    (["--aov-files"], "--aov-files: needs --aov"),
    (["--exr-half"], "--exr-half: no EXR file is written"),
    (["--write-partial", "-1"], "--write-partial: must be a number of seconds >= 0"),
    (["--write-partial", "nan"], "--write-partial: must be a number of seconds >= 0"),
])
def test_cli_option_errors_write_nothing(tmp_path, capsys, extra, message):
    out = tmp_path / "c.png"
    assert main(["render", str(CORNELL), "-o", str(out), *SMALL, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_cli_aov_file_checked_before_rendering(tmp_path, capsys):
    (tmp_path / "c.depth.exr").mkdir()
    assert main(["render", str(CORNELL), "-o", str(tmp_path / "c.png"), "--aov", "depth", *SMALL]) == 2
    assert "c.depth.exr: --aov: is a folder" in capsys.readouterr().err
    assert not (tmp_path / "c.png").exists()


def test_cli_denoise_and_partial_need_the_path_tracer(tmp_path, capsys):
    for extra in (["--denoise", "atrous"], ["--write-partial", "1"]):
        assert main(["render", str(CORNELL), "-o", str(tmp_path / "c.png"), "--integrator", "whitted",
                     *SMALL, *extra]) == 2
        assert "needs the path tracer" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
