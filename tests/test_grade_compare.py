"""``raytrace compare`` and :func:`raytrace.grade.compare` on images made here (no
rendering): exact metrics for known changes, SSIM against scikit-image, FLIP against
the flip-evaluator package's own file reader, every kind of bad input."""
import io
import json
import math
import zlib
import struct

import imageio.v3 as iio
import numpy as np
import pytest

from raytrace import cli
from raytrace.film.exr import exr_bytes
from raytrace.grade import GradeError, compare, read_image
from raytrace.grade.criteria import parse_criteria
from raytrace.image import pfm_bytes, srgb_to_linear, to_8bit


def run(capsys, *argv):
    status = cli.main(["compare", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def png16_bytes(arr):
    """A 16-bit PNG (grey, grey+alpha, RGB or RGBA) written by hand: Pillow cannot
    write 16-bit colour."""
    arr = np.asarray(arr, np.uint16)
    h, w = arr.shape[:2]
    ch = 1 if arr.ndim == 2 else arr.shape[2]
    raw = b"".join(b"\x00" + arr[y].astype(">u2").tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", w, h, 16, {1: 0, 2: 4, 3: 2, 4: 6}[ch], 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@pytest.fixture
def square(tmp_path):
    """A grey 64 x 64 PNG and a copy with an 8 x 8 square raised by 40 codes."""
    e = np.full((64, 64, 3), 100, np.uint8)
    a = e.copy()
    a[10:18, 20:28] = 140
    iio.imwrite(tmp_path / "e.png", e)
    iio.imwrite(tmp_path / "a.png", a)
    return tmp_path / "a.png", tmp_path / "e.png"


# --------------------------------------------------------------------- exact values
def test_identical_images_have_zero_error_and_exit_0(capsys, square):
    _, e = square
    status, out, _ = run(capsys, e, e, "--json")
    assert status == 0
    r = json.loads(out)
    assert r["passed"] and r["domain"] == "ldr"
    m = r["metrics"]
    assert m["rmse"] == m["relmse"] == m["max"] == m["mae"] == m["over"] == m["block"] == m["flip"] == 0.0
    assert m["ssim"] == pytest.approx(1.0, abs=1e-12) and m["psnr"] is None    # inf: identical


def test_injected_square_gives_the_expected_numbers_exactly(capsys, square):
    a, e = square
    status, out, _ = run(capsys, a, e, "--json")
    m = json.loads(out)["metrics"]
    frac = 64 / 4096                                       # 8 x 8 pixels of 64 x 64
    assert m["rmse"] == pytest.approx(math.sqrt(frac) * 40 / 255, rel=1e-12)
    assert m["max"] == pytest.approx(40 / 255, rel=1e-12)
    assert m["mae"] == pytest.approx(frac * 40 / 255, rel=1e-12)
    assert m["over"] == frac                               # 40 codes > 8
    # the square (rows 10-17, columns 20-27) covers 6 x 4 pixels of the 8 x 8 blocks at
    # rows 8-15, columns 16-23 and 24-31: 24 of 64 pixels 40 codes up
    assert m["block"] == pytest.approx(24 / 64 * 40 / 255, rel=1e-12)
    assert m["psnr"] == pytest.approx(-10 * math.log10(frac * (40 / 255) ** 2), rel=1e-12)
    assert m["relmse"] == pytest.approx(frac * (40 / 255) ** 2 / (100 / 255 + 0.01) ** 2, rel=1e-12)
    assert status == 1                                     # default tolerance: block 15 codes > 4
    # the threshold is strict: a square exactly 8 codes off is not 'over'
    status, out, _ = run(capsys, a, e, "--json", "--threshold", "40/255")
    assert json.loads(out)["metrics"]["over"] == 0.0
    status, out, _ = run(capsys, a, e, "--json", "--threshold", "39/255")
    assert json.loads(out)["metrics"]["over"] == frac


def test_hdr_square_is_exact_in_linear_values(tmp_path):
    e = np.full((32, 48, 3), 0.25, np.float32)
    a = e.copy()
    a[4:8, 4:12] += 3.0                                    # 32 pixels, HDR (above 1)
    (tmp_path / "e.pfm").write_bytes(pfm_bytes(e))
    (tmp_path / "a.exr").write_bytes(exr_bytes({"color": a}))
    r = compare(tmp_path / "a.exr", tmp_path / "e.pfm", criteria="max<=3.5")
    frac = 32 / (32 * 48)
    assert r.domain == "hdr" and r.passed
    assert r.metrics["rmse"] == pytest.approx(3.0 * math.sqrt(frac), rel=1e-9)
    assert r.metrics["max"] == pytest.approx(3.0, rel=1e-9)
    assert r.metrics["over"] == pytest.approx(frac)
    assert r.metrics["psnr"] == pytest.approx(10 * math.log10(0.25 ** 2 / (9 * frac)), rel=1e-9)


def test_block_means_cover_the_edges_and_ignore_zero_mean_noise():
    """A block cut by the image's edge is averaged over the pixels it has; a +/- pattern
    whose blocks sum to zero has no block difference although every pixel differs."""
    from raytrace.grade.metrics import block_difference
    d = np.zeros((10, 10, 3))
    d[9, 9, 1] = 1.0                                       # in the 2 x 2 corner block
    assert block_difference(d) == pytest.approx(0.25)
    d[0, 0, 0] = -1.0                                      # a full block: 1 / 64
    assert block_difference(d) == pytest.approx(0.25)
    noise = np.ones((16, 16, 3))
    noise[::2] *= -1                                       # rows alternate +1 / -1
    assert block_difference(noise) == 0.0


def test_tolerance_decides_the_exit_status(capsys, square):
    a, e = square
    rmse = math.sqrt(64 / 4096) * 40 / 255                 # 0.0196
    assert run(capsys, a, e, "--metric", "rmse", "--tolerance", "0.02")[0] == 0
    assert run(capsys, a, e, "--metric", "rmse", "--tolerance", "0.019")[0] == 1
    assert run(capsys, a, e, "--tolerance", f"rmse<={rmse}")[0] == 0      # equal to the limit passes
    assert run(capsys, a, e, "--tolerance", "rmse<=0.02,ssim>=0.99")[0] == 1
    assert run(capsys, a, e, "--metric", "psnr,max", "--tolerance", "30,40/255")[0] == 0
    status, out, _ = run(capsys, a, e, "--tolerance", "psnr>=40")
    assert status == 1 and out.strip().splitlines()[-1].startswith("FAIL: psnr 34.15")


def test_float_render_against_its_own_png_is_exact(tmp_path):
    """LDR vs HDR: the float image is rounded as our PNG writer would round it."""
    rng = np.random.default_rng(3)
    img = rng.random((20, 30, 3)).astype(np.float32) * 1.3          # some values above 1: clamped
    iio.imwrite(tmp_path / "r.png", to_8bit(img))
    r = compare(img, tmp_path / "r.png")
    assert r.domain == "ldr" and r.code_scale == 255
    assert r.metrics["max"] == 0.0 and r.passed
    assert any("rounded to 8 bits" in n for n in r.notes)
    # forcing HDR compares the linear values: the 8-bit rounding now shows
    h = compare(img, tmp_path / "r.png", domain="hdr", criteria=())
    assert 0 < h.metrics["max"] <= 0.3 + 1e-6


# -------------------------------------------------------------------- SSIM and FLIP
def test_ssim_matches_scikit_image():
    skimage_metrics = pytest.importorskip("skimage.metrics", reason="scikit-image not installed")
    from raytrace.grade.ssim import ssim
    rng = np.random.default_rng(7)
    x = rng.random((40, 57, 3))
    y = np.clip(x + 0.08 * rng.standard_normal(x.shape), 0, 1)

    def theirs(a, b, data_range):
        return skimage_metrics.structural_similarity(a, b, data_range=data_range, channel_axis=2,
                                                     gaussian_weights=True, sigma=1.5,
                                                     use_sample_covariance=False)
    assert ssim(y, x, 1.0) == pytest.approx(theirs(x, y, 1.0), abs=1e-12)
    assert ssim(7.5 * y, 7.5 * x, 7.5) == pytest.approx(theirs(7.5 * x, 7.5 * y, 7.5), abs=1e-12)
    # compare(): LDR uses data range 1 on the encoded values; HDR the reference's max - min
    ldr = compare((y * 255 + 0.5).astype(np.uint8), (x * 255 + 0.5).astype(np.uint8), criteria=(), flip=False)
    xe, ye = ((v * 255 + 0.5).astype(np.uint8) / 255.0 for v in (x, y))
    assert ldr.metrics["ssim"] == pytest.approx(theirs(xe, ye, 1.0), abs=1e-12)
    hdr = compare(3 * y, 3 * x, criteria=(), flip=False)
    assert hdr.metrics["ssim"] == pytest.approx(theirs(3 * x, 3 * y, 3 * (x.max() - x.min())), abs=1e-12)
    assert theirs(x, y, 1.0) < 0.99                         # the noise is visible to SSIM


def test_flip_matches_the_library_reading_the_files_itself(tmp_path):
    """Our decoding (sRGB PNG -> encoded values; EXR -> linear) feeds FLIP exactly what
    flip_evaluator's own loader does: the means agree."""
    flip_evaluator = pytest.importorskip("flip_evaluator")
    rng = np.random.default_rng(11)
    base = rng.random((48, 64, 3))
    base = np.repeat(np.repeat(base[::4, ::4], 4, 0), 4, 1)          # blocks: edges FLIP can see
    test = np.clip(base + 0.15 * rng.standard_normal(base.shape), 0, 1)
    iio.imwrite(tmp_path / "ref.png", (base * 255 + 0.5).astype(np.uint8))
    iio.imwrite(tmp_path / "test.png", (test * 255 + 0.5).astype(np.uint8))
    _, lib_mean, _ = flip_evaluator.evaluate(str(tmp_path / "ref.png"), str(tmp_path / "test.png"), "LDR")
    ours = compare(tmp_path / "test.png", tmp_path / "ref.png", criteria=())
    assert ours.metrics["flip"] == pytest.approx(lib_mean, rel=1e-5) and 0.05 < lib_mean < 0.6
    hdr_ref, hdr_test = (srgb_to_linear(x) * 4.0 for x in (base, test))
    (tmp_path / "ref.exr").write_bytes(exr_bytes({"color": hdr_ref}))
    (tmp_path / "test.exr").write_bytes(exr_bytes({"color": hdr_test}))
    _, lib_hdr, _ = flip_evaluator.evaluate(str(tmp_path / "ref.exr"), str(tmp_path / "test.exr"), "HDR")
    ours_hdr = compare(tmp_path / "test.exr", tmp_path / "ref.exr", criteria=())
    assert ours_hdr.domain == "hdr" and ours_hdr.metrics["flip"] == pytest.approx(lib_hdr, rel=1e-5)
    # a smaller change is a smaller FLIP error
    half = compare(np.clip(base + 0.5 * (test - base), 0, 1), base, criteria=(), domain="hdr")
    assert half.metrics["flip"] < ours.metrics["flip"]


def test_hdr_flip_against_an_all_black_reference(tmp_path, capsys):
    """An all-black HDR reference (a render whose lights are broken) has no exposure range
    for HDR-FLIP; flip_evaluator ended the process with status 255. Black against black
    is FLIP 0; a test image against black gets FLIP with the test's range, the value of
    the two swapped (the library's own answer with the test as reference). In a real
    ``raytrace compare`` process: a result, status 0 or 1."""
    import subprocess
    import sys
    pytest.importorskip("flip_evaluator")
    black = np.zeros((12, 16, 3))
    lit = np.random.default_rng(3).random((12, 16, 3)) * 2
    assert compare(black, black, criteria=(), domain="hdr").metrics["flip"] == 0.0
    against_black = compare(lit, black, criteria=(), domain="hdr").metrics["flip"]
    swapped = compare(black, lit, criteria=(), domain="hdr").metrics["flip"]
    assert against_black == pytest.approx(swapped, rel=1e-6) and 0.5 < swapped <= 1.0
    np.save(tmp_path / "black.npy", black)
    np.save(tmp_path / "lit.npy", lit)
    for test, status in (("black.npy", 0), ("lit.npy", 1)):
        r = subprocess.run([sys.executable, "-m", "raytrace", "compare", test, "black.npy"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == status and "flip" in r.stdout, (r.returncode, r.stdout, r.stderr)


def test_diff_and_flip_maps_are_written(capsys, square, tmp_path):
    a, e = square
    status, _, err = run(capsys, a, e, "--diff", tmp_path / "d.png", "--flip-map", tmp_path / "f.png")
    assert status == 1 and "wrote" in err
    d = iio.imread(tmp_path / "d.png")
    assert d.shape == (64, 64, 3)
    inside, outside = d[12, 22], d[40, 40]
    assert outside.max() <= 4                               # magma's bottom (0, 0, 4): no difference
    assert inside.sum() > 600                               # magma's top: the largest difference
    f = iio.imread(tmp_path / "f.png")
    assert f.shape == (64, 64, 3) and f[12:16, 22:26].sum() > f[40:44, 40:44].sum()


# ---------------------------------------------------------------- reading the formats
def test_sixteen_bit_png_is_read_exactly(tmp_path):
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 65536, (6, 7, 3), dtype=np.uint16)
    (tmp_path / "c16.png").write_bytes(png16_bytes(codes))
    img = read_image(tmp_path / "c16.png")
    assert img.bits == 16 and np.array_equal(img.codes, codes)
    # 16 vs 8 bit of the same picture: only the 8-bit rounding differs
    eight = np.floor(codes / 257.0 + 0.5).astype(np.uint8)
    iio.imwrite(tmp_path / "c8.png", eight)
    r = compare(tmp_path / "c16.png", tmp_path / "c8.png", criteria="max<=0.5/255")
    assert r.passed and any("bit depths differ" in n for n in r.notes)
    # grey + alpha, 16 bit, opaque: alpha dropped
    ga = np.dstack([codes[..., 0], np.full((6, 7), 65535, np.uint16)])
    (tmp_path / "ga.png").write_bytes(png16_bytes(ga))
    g = read_image(tmp_path / "ga.png")
    assert np.array_equal(g.codes[..., 2], codes[..., 0]) and "opaque alpha channel dropped" in g.notes


def test_alpha_handling(tmp_path):
    rgba = np.zeros((4, 4, 4), np.uint8)
    rgba[..., :3] = 200
    rgba[..., 3] = 255
    rgba[0, 0, 3] = 0                                       # one transparent pixel
    iio.imwrite(tmp_path / "t.png", rgba)
    with pytest.raises(GradeError, match="1 pixel.* transparent"):
        read_image(tmp_path / "t.png")
    assert read_image(tmp_path / "t.png", alpha="ignore").codes[0, 0, 0] == 200
    assert read_image(tmp_path / "t.png", alpha="black").codes[0, 0, 0] == 0
    assert read_image(tmp_path / "t.png", alpha="white").codes[0, 0, 0] == 255
    half = rgba.copy()
    half[0, 0] = (255, 255, 255, 128)                       # half-covered white over black: linear 0.502
    iio.imwrite(tmp_path / "h.png", half)
    v = read_image(tmp_path / "h.png", alpha="black").linear[0, 0, 0]
    assert v == pytest.approx(128 / 255, abs=0.003)


def test_npz_with_std_carries_a_variance(tmp_path):
    mean = np.full((3, 4, 3), 0.5)
    np.savez(tmp_path / "r.npz", mean=mean.astype(np.float16), std=np.full((3, 4, 3), 0.1, np.float16),
             spp=np.int64(64))
    img = read_image(tmp_path / "r.npz")
    assert img.kind == "hdr" and img.spp == 64
    assert np.allclose(img.variance, 0.1 ** 2, rtol=1e-3)


# ---------------------------------------------------------------------- bad input
def _bad_files(tmp_path, square):
    a, e = square
    data = a.read_bytes()
    (tmp_path / "trunc.png").write_bytes(data[: len(data) // 2])
    (tmp_path / "head.png").write_bytes(data[:20])
    (tmp_path / "text.png").write_text("not an image")
    iio.imwrite(tmp_path / "small.png", np.zeros((32, 64, 3), np.uint8))
    rgba = np.dstack([np.full((64, 64, 3), 100, np.uint8), np.full((64, 64), 255, np.uint8)])
    rgba[5, 5, 3] = 0
    iio.imwrite(tmp_path / "alpha.png", rgba)
    rgba16 = np.dstack([np.full((64, 64, 3), 25700, np.uint16), np.full((64, 64), 65535, np.uint16)])
    rgba16[1, 2, 3] = 100
    (tmp_path / "alpha16.png").write_bytes(png16_bytes(rgba16))
    pfm = pfm_bytes(np.ones((64, 64, 3), np.float32))
    (tmp_path / "trunc.pfm").write_bytes(pfm[:-10])
    nan = np.ones((64, 64, 3), np.float32)
    nan[3, 3, 1] = np.nan
    (tmp_path / "nan.pfm").write_bytes(pfm_bytes(nan))
    (tmp_path / "bad.exr").write_bytes(b"\x76\x2f\x31\x01garbage")
    return {
        "different sizes": ("small.png", "sizes differ: "),
        "missing file": ("missing.png", "actual file not found"),
        "truncated PNG": ("trunc.png", "cannot read PNG"),
        "PNG cut in its header": ("head.png", "truncated or missing header"),
        "not a PNG": ("text.png", "not a PNG file"),
        "transparent alpha": ("alpha.png", "transparent"),
        "16-bit with transparent alpha": ("alpha16.png", "transparent (alpha < 65535)"),
        "truncated PFM": ("trunc.pfm", "PFM is truncated"),
        "NaN in a PFM": ("nan.pfm", "NaN or infinite"),
        "broken EXR": ("bad.exr", "cannot read EXR"),
        "unknown format": ("x.jpg", "unsupported actual format"),
    }


def test_bad_input_exits_2_with_one_line_and_writes_nothing(capsys, square, tmp_path):
    _, e = square
    for case, (name, words) in _bad_files(tmp_path, square).items():
        out_png = tmp_path / "diff_out.png"
        status, out, err = run(capsys, tmp_path / name, e, "--diff", out_png)
        assert status == 2, case
        assert out == "" and len(err.strip().splitlines()) == 1, (case, err)
        assert err.startswith("raytrace: error: ") and words in err, (case, err)
        assert not out_png.exists(), case


def test_bad_options_exit_2(capsys, square):
    a, e = square
    for argv, words in ((["--metric", "rmse"], "needs --tolerance"),
                        (["--tolerance", "0.1"], "needs --metric"),
                        (["--tolerance", "rmze<=1"], "unknown metric 'rmze'"),
                        (["--metric", "rmse,mae", "--tolerance", "0.1"], "1 tolerance(s) for 2 metric(s)"),
                        (["--tolerance", "ssim<=0.9"], "checked as >="),
                        (["--tolerance", "rmse<=nan"], "finite"),
                        (["--threshold", "-1"], "must be >= 0"),
                        (["--ztest"], "the z-test needs float images"),
                        (["--actual-spp", "4"], "need --ztest"),
                        (["--flip-map", "x.png", "--no-flip"], "cannot be used with --no-flip"),
                        (["--diff", str(e)], "is also an input file")):
        status, _, err = run(capsys, a, e, *argv)
        assert status == 2 and words in err and len(err.strip().splitlines()) == 1, (argv, err)


def test_criteria_text_forms():
    assert [str(c) for c in parse_criteria("mae<=1/255, over=0.005")] == ["mae <= 0.00392157", "over <= 0.005"]
    assert [str(c) for c in parse_criteria({"psnr": 40})] == ["psnr >= 40"]
    assert [str(c) for c in parse_criteria("0.1,0.9", "rmse,ssim")] == ["rmse <= 0.1", "ssim >= 0.9"]
    with pytest.raises(GradeError):
        parse_criteria("rmse<=0.1,0.2")


def test_json_output_is_machine_readable(capsys, square):
    a, e = square
    status, out, _ = run(capsys, a, e, "--json", "--metric", "mae", "--tolerance", "1/255")
    r = json.loads(out)
    assert status == 0 and r["passed"] is True
    assert r["criteria"] == [{"metric": "mae", "op": "<=", "limit": 1 / 255, "value": r["metrics"]["mae"],
                              "passed": True}]
    assert set(r["metrics"]) == {"rmse", "relmse", "psnr", "max", "mae", "over", "block", "ssim", "flip"}
    assert r["width"] == 64 and r["height"] == 64 and r["ztest"] is None


@pytest.mark.parametrize("suffix", [".png", ".png16", ".pfm", ".exr", ".npz"])
def test_mutated_files_never_crash(suffix, tmp_path, capsys):
    """Random byte flips, truncations and insertions of valid files: the comparison
    either works (0 or 1) or refuses with one line (2, or 1 for an I/O error), never an
    internal error (3) or a traceback."""
    import random
    rng = np.random.default_rng(9)
    img = rng.random((6, 5, 3))
    if suffix == ".png":
        buf = io.BytesIO()
        iio.imwrite(buf, (img * 255).astype(np.uint8), extension=".png")
        data = buf.getvalue()
    elif suffix == ".png16":
        data = png16_bytes((img * 65535).astype(np.uint16))
    elif suffix == ".pfm":
        data = pfm_bytes(img.astype(np.float32))
    elif suffix == ".exr":
        data = exr_bytes({"color": img})
    else:
        buf = io.BytesIO()
        np.savez(buf, mean=img, std=img * 0.1, spp=np.int64(4))
        data = buf.getvalue()
    ext = ".png" if suffix == ".png16" else suffix
    good = tmp_path / f"good{ext}"
    good.write_bytes(data)
    gen = random.Random(sum(map(ord, suffix)))
    for case in range(40):
        b = bytearray(data)
        for _ in range(gen.randint(1, 4)):
            op, at = gen.random(), gen.randrange(len(b))
            if op < 0.5:
                b[at] = gen.randrange(256)
            elif op < 0.8:
                del b[at:]
                if not b:
                    break
            else:
                b[at:at] = bytes(gen.randrange(256) for _ in range(gen.randint(1, 8)))
        bad = tmp_path / f"bad{ext}"
        bad.write_bytes(bytes(b))
        status, out, err = run(capsys, bad, good, "--no-flip")
        assert status in (0, 1, 2), (case, status, err)
        if status == 2:
            assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, (case, err)
