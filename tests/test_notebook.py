"""Renders in notebooks: ``_repr_png_`` (sRGB, size cap), ``raytrace.show`` and the example
notebook docs/notebook.ipynb, executed with nbclient."""
import io
import os
import pathlib

import imageio.v3 as iio
import numpy as np
import pytest

from raytrace.image import RenderedImage, RenderInfo, linear_to_srgb
from raytrace.notebook import displayable

REPO = pathlib.Path(__file__).resolve().parents[1]
INFO = RenderInfo("path", 0, 0, 1, 1, 0, 0, 0.0)


def test_repr_png_is_srgb_encoded():
    values = np.array([0.0, 0.0031308, 0.18, 0.5, 1.0, 4.0])
    img = RenderedImage(np.repeat(values[None, :, None], 3, axis=2), INFO)
    png = iio.imread(io.BytesIO(img._repr_png_()))
    want = np.round(linear_to_srgb(values) * 255.0).astype(np.uint8)
    assert png.shape == (1, 6, 3) and np.array_equal(png[0, :, 0], want)
    assert want[3] == 188 and want[5] == 255            # 0.5 linear is 188, not 128; clamped above 1


def test_repr_png_caps_the_size_by_averaging_linear_values():
    rng = np.random.default_rng(0)
    img = RenderedImage(rng.random((3000, 1500, 3)), INFO)
    png = iio.imread(io.BytesIO(img._repr_png_()))
    assert png.shape == (1000, 500, 3)                  # factor 3: 3000 -> 1000 <= 1024
    stripes = RenderedImage(np.zeros((2048, 2048, 3)), INFO)
    stripes[:, ::2] = 1.0                               # averages to 0.5 linear, not to 0.5 sRGB
    assert (iio.imread(io.BytesIO(stripes._repr_png_())) == 188).all()
    assert RenderedImage(np.zeros((4, 4, 3)), INFO)[..., 0]._repr_png_() is None    # not an image


def test_displayable_scales_one_channel_to_its_finite_range():
    depth = np.array([[1.0, 3.0], [np.inf, 2.0]])
    grey = displayable(depth)
    assert grey.shape == (2, 2, 3) and np.allclose(grey[..., 0], [[0.0, 1.0], [0.0, 0.5]])
    uv = displayable(np.ones((2, 2, 2)))
    assert np.array_equal(uv[0, 0], [1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="cannot show"):
        displayable(np.zeros((2, 2, 4)))


def test_example_notebook_runs(monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(REPO / "docs" / "notebook.ipynb", as_version=4)
    # the kernel imports this checkout's raytrace, whatever is installed
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(REPO / "docs")}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pngs) >= 5                               # the render, three AOVs, the denoised pair
    assert "'albedo'" in nb.cells[-1].outputs[0]["data"]["text/plain"]


def test_show_without_a_display_writes_the_png_and_says_where(monkeypatch, capsys):
    """No notebook, no $DISPLAY (matplotlib's backend 'agg'): ``show`` must not do
    nothing silently: it writes the preview PNG to a temporary file and prints its path."""
    import matplotlib

    import raytrace
    from raytrace.image import preview_png
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    depth = np.array([[1.0, 3.0, 2.0], [np.inf, 2.0, 1.5]])
    path = raytrace.show(depth, title="depth", max_size=64)
    try:
        err = capsys.readouterr().err
        assert path is not None and pathlib.Path(path).read_bytes() == preview_png(displayable(depth), 64)
        assert err == (f"raytrace.show: no window can open here (no $DISPLAY, matplotlib's backend is 'agg'); "
                       f"wrote 'depth' to {path} (to save an image yourself: "
                       "raytrace.save_image('out.png', image))\n")
        assert iio.imread(path).shape == (2, 3, 3)
    finally:
        os.unlink(path)


def test_show_in_a_terminal_ipython_does_not_print_an_object_repr(monkeypatch, capsys):
    """A terminal IPython shell has no kernel: its ``display`` would only print
    ``<IPython.core.display.Image object>``; ``show`` goes the matplotlib way instead."""
    IPython = pytest.importorskip("IPython")
    import matplotlib

    import raytrace
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())      # a shell without a kernel
    monkeypatch.setattr(matplotlib, "get_backend", lambda: "svg")
    path = raytrace.show(np.zeros((2, 2, 3)))
    try:
        out, err = capsys.readouterr()
        assert out == "" and "<IPython" not in err
        assert err.startswith("raytrace.show: no window can open here (") and path in err
    finally:
        os.unlink(path)
