"""The live preview reloads kernel code: ``raytrace view`` on a copy of the package, whose
kernels are edited while it runs (raytrace/view/code.py). An edit shows "compiling ..."
naming what was edited, then the image of the new code; an edit that does not compile
shows its short block and keeps the last image; undoing the edit brings the old image
back without compiling. Over HTTP here; in Chromium below."""
import io
import json
import shutil
import time

import numpy as np
import pytest

from cdp import Browser, find_chromium
from view_helpers import DEADLINE, REPO, Viewer, done_after, probe_scene, write_scene

W, H = 96, 72


def red_background():
    """``background``'s body: red everywhere (and an unused local that differs from call to
    call: each edit compiles anew, rather than finding the last run's compile cached)."""
    return f"    _this_run = {time.time_ns()}\n    return 1.0, 0.0, 0.0\n"


BROKEN = "    return 1.0 + (1.0, 2.0), 0.0, 0.0\n"


@pytest.fixture
def copy(tmp_path):
    """A copy of the package with the probe scene beside it -> (root, scene path, the
    background function's file, its text)."""
    for package in ("raytrace", "userio"):
        shutil.copytree(REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene(size=(W, H)))
    whitted = tmp_path / "raytrace" / "kernels" / "whitted.py"
    return tmp_path, path, whitted, whitted.read_text()


def with_body(text, body):
    """``text`` (kernels/whitted.py) with ``background``'s first statement ``body``."""
    start = text.index("def background(")
    doc_end = text.index('"""', text.index('"""', start) + 3) + 4
    return text[:doc_end] + body + text[doc_end:]


def states_until(viewer, predicate, seen, errors=False):
    """Wait for ``predicate`` on the event stream, keeping every state seen in ``seen``."""
    def keep(state):
        seen.append(state)
        return predicate(state)
    return viewer.wait(keep, errors=errors)


def done_with(viewer, generation, corner):
    """A finished frame after ``generation`` whose top-left pixel is ``corner``."""
    def ok(state):
        if not done_after(generation)(state) or state["error"]:
            return False
        _, image = viewer.frame()
        return np.allclose(image[0, 0], corner)
    return ok


def test_an_edit_compiles_an_error_keeps_the_image_and_an_undo_compiles_nothing(copy):
    root, path, whitted, original = copy
    viewer = Viewer(path, cwd=root, env={"PYTHONPATH": str(root)})
    try:
        first = viewer.wait(done_after())
        _, image = viewer.frame()
        assert np.allclose(image[0, 0], 0.05)                        # the probe's background

        seen = []
        whitted.write_text(with_body(original, red_background()))
        edited = states_until(viewer, done_with(viewer, first["generation"], (1.0, 0.0, 0.0)), seen)
        messages = [s["message"] for s in seen]
        assert any(m.startswith("compiling 1 kernel after edits to kernels/whitted.py: background")
                   for m in messages), messages
        assert any("raytrace/kernels/whitted.py changed: loading the code" in line for line in viewer.errors())

        whitted.write_text(with_body(original, BROKEN))
        broken = viewer.wait(lambda s: bool(s["error"]), errors=True)
        text = with_body(original, BROKEN)
        line = text[:text.index(BROKEN)].count("\n") + 1
        assert broken["error"].splitlines()[:3] == [
            f"kernel code does not compile: raytrace/kernels/whitted.py, line {line}, in background",
            "    " + BROKEN.strip(), "cannot add float64 and UniTuple(float64 x 2)"]
        assert "Traceback" not in broken["error"] and "During:" not in broken["error"]
        _, kept = viewer.frame()
        assert np.allclose(kept[0, 0], (1.0, 0.0, 0.0))             # the last image stays

        seen = []
        whitted.write_text(original)
        undone = states_until(viewer, done_with(viewer, broken["generation"], 0.05), seen, errors=True)
        assert not any(s["message"].startswith("compiling") for s in seen), [s["message"] for s in seen]
        _, back = viewer.frame()
        assert np.array_equal(back, image)                          # the original image, bit for bit
        assert undone["frame"]["id"] > edited["frame"]["id"]
    finally:
        viewer.kill()


def test_the_page_shows_the_compile_the_error_block_and_the_new_image(copy, output_dir):
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium found (Debian: apt-get install chromium; .ci/run installs it)")
    import imageio.v3 as iio
    root, path, whitted, original = copy
    viewer = Viewer(path, cwd=root, env={"PYTHONPATH": str(root)})
    try:
        with Browser(700, 420, timeout=120, chromium=chromium) as browser:
            browser.open(viewer.url)
            first = viewer.wait(done_after())
            browser.wait_for(f"document.getElementById('frame').dataset.frame === '{first['frame']['id']}'",
                             deadline_s=DEADLINE)

            def corner():
                """The screenshot's pixel just inside the image's top-left corner (where the
                image is now: the status line above it may wrap)."""
                box = json.loads(browser.evaluate(
                    "JSON.stringify(document.getElementById('frame').getBoundingClientRect())"))
                shot = iio.imread(io.BytesIO(browser.screenshot()))[..., :3]
                return tuple(int(v) for v in shot[round(box["y"]) + 2, round(box["x"]) + 2])

            whitted.write_text(with_body(original, red_background()))
            browser.wait_for("document.getElementById('status').textContent.includes('compiling')",
                             deadline_s=DEADLINE)
            status = browser.evaluate("document.getElementById('status').textContent")
            assert "kernels/whitted.py: background" in status
            (output_dir / "code_1_compiling.png").write_bytes(browser.screenshot())
            red = viewer.wait(done_with(viewer, first["generation"], (1.0, 0.0, 0.0)))
            browser.wait_for(f"document.getElementById('frame').dataset.frame === '{red['frame']['id']}'",
                             deadline_s=DEADLINE)
            (output_dir / "code_2_edited.png").write_bytes(browser.screenshot())
            assert corner() == (255, 0, 0)                              # sRGB of (1, 0, 0)

            whitted.write_text(with_body(original, BROKEN))
            browser.wait_for("!document.getElementById('error').hidden", deadline_s=DEADLINE)
            banner = browser.evaluate("document.getElementById('error').textContent")
            assert banner.startswith("kernel code does not compile: raytrace/kernels/whitted.py, line ")
            assert BROKEN.strip() in banner and "cannot add float64" in banner
            (output_dir / "code_3_error.png").write_bytes(browser.screenshot())
            assert corner() == (255, 0, 0)                              # the last image stays

            whitted.write_text(original)
            back = viewer.wait(done_with(viewer, first["generation"], 0.05), errors=True)
            browser.wait_for(f"document.getElementById('frame').dataset.frame === '{back['frame']['id']}' && "
                             "document.getElementById('error').hidden", deadline_s=DEADLINE)
            (output_dir / "code_4_undone.png").write_bytes(browser.screenshot())
            assert max(corner()) < 100                                  # the dark background again
    finally:
        viewer.kill()
