"""The live preview in a real browser (headless Chromium through tests/cdp.py): the page
loads and shows the image, an edit of the scene file changes the picture where the edit
is and nowhere else, a drag orbits the camera, the wheel dollies, hovering names the
object, a broken edit shows its one line. Screenshots go to tests/output/ to be looked at."""
import io
import json

import numpy as np
import pytest

from cdp import Browser, find_chromium
from view_helpers import DEADLINE, Viewer, done_after, probe_scene, write_scene

W, H = 192, 144          # the image; shown at its own size (CSS pixels = screenshot pixels)


@pytest.fixture
def chromium():
    path = find_chromium()
    if path is None:
        pytest.skip("no Chromium found (Debian: apt-get install chromium; .ci/run installs it)")
    return path



def _shot(browser, path):
    import imageio.v3 as iio
    png = browser.screenshot()
    path.write_bytes(png)
    return iio.imread(io.BytesIO(png))[..., :3]


def _shown(browser, frame_id):
    browser.wait_for(f"document.getElementById('frame').dataset.frame === '{frame_id}'", deadline_s=DEADLINE)


def test_page_edit_drag_wheel_hover_and_error(tmp_path, chromium, output_dir):
    import raytrace
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene(size=(W, H)))
    viewer = Viewer(path)
    try:
        with Browser(900, 560, timeout=120, chromium=chromium) as browser:
            browser.open(f"http://127.0.0.1:{viewer.port}/")
            first = viewer.wait(done_after())
            _shown(browser, first["frame"]["id"])
            box = browser.evaluate("JSON.stringify(document.getElementById('frame').getBoundingClientRect())")
            box = json.loads(box)
            x0, y0 = round(box["x"]), round(box["y"])
            assert (round(box["width"]), round(box["height"])) == (W, H)
            before = _shot(browser, output_dir / "1_first.png")
            # the page shows the frame's pixels: its sRGB PNG, as the server encodes it
            _, _, png = viewer.request("GET", "/frame.png")
            import imageio.v3 as iio
            served = iio.imread(io.BytesIO(png))[..., :3]
            on_page = before[y0:y0 + H, x0:x0 + W]
            assert np.abs(on_page.astype(int) - served.astype(int)).max() <= 2

            # an edit: the left sphere turns green; the page follows, only there
            write_scene(path, probe_scene(left=(0.1, 0.9, 0.1), size=(W, H)))
            edited = viewer.wait(done_after(first["generation"]))
            _shown(browser, edited["frame"]["id"])
            after = _shot(browser, output_dir / "2_edited.png")
            scene = raytrace.load_scene(path)
            ids = raytrace.render(scene, aovs=["object_id"]).aovs["object_id"]
            left = [k for k, n in enumerate(scene.object_names) if n.endswith("(left_ball)")][0]
            region_before, region_after = before[y0:y0 + H, x0:x0 + W], after[y0:y0 + H, x0:x0 + W]
            changed = np.any(region_before != region_after, axis=-1)
            assert changed.sum() > 0.9 * (ids == left).sum()
            assert not np.any(changed & (ids != left))
            assert region_after[H // 2, W // 4, 1] > region_after[H // 2, W // 4, 0]     # green now

            # hover over the left sphere: its value and names
            browser.click(x0 + W // 4, y0 + H // 2)
            browser.wait_for("document.getElementById('pixel').textContent.includes('left_ball')")
            assert "material: left" in browser.evaluate("document.getElementById('pixel').textContent")

            # drag to the right: the scene turns with the mouse (the eye goes left, yaw < 0)
            browser.drag(x0 + W // 2 - 40, y0 + H // 2, x0 + W // 2 + 40, y0 + H // 2, steps=8)
            orbited = viewer.wait(lambda s: s["camera_overridden"] and s["camera"]["center"][0] < -1.0
                                  and done_after(edited["generation"])(s))
            _shown(browser, orbited["frame"]["id"])
            _shot(browser, output_dir / "3_orbited.png")
            distance = np.linalg.norm(orbited["camera"]["center"])
            assert distance == pytest.approx(6.0)

            # the wheel dollies: away from the look-at point on a positive delta
            browser.wheel(x0 + W // 2, y0 + H // 2, 300)
            dollied = viewer.wait(lambda s: np.linalg.norm(s["camera"]["center"]) > distance * 1.2
                                  and done_after(orbited["generation"])(s))
            _shown(browser, dollied["frame"]["id"])
            _shot(browser, output_dir / "4_dollied.png")

            # reset: the file's camera and the edited image again, bit for bit
            browser.evaluate("document.getElementById('reset').click()")
            reset = viewer.wait(lambda s: not s["camera_overridden"] and done_after(dollied["generation"])(s))
            _shown(browser, reset["frame"]["id"])
            again = _shot(browser, output_dir / "5_reset.png")
            assert np.array_equal(again[y0:y0 + H, x0:x0 + W], region_after)

            # a broken edit: the one line in the page, the image kept
            write_scene(path, "{ nope")
            browser.wait_for("!document.getElementById('error').hidden", deadline_s=DEADLINE)
            text = browser.evaluate("document.getElementById('error').textContent")
            assert text.startswith(f"{path}: ") and "\n" not in text
            broken = _shot(browser, output_dir / "6_broken.png")
            box2 = json.loads(browser.evaluate(
                "JSON.stringify(document.getElementById('frame').getBoundingClientRect())"))
            bx, by = round(box2["x"]), round(box2["y"])
            assert np.array_equal(broken[by:by + H, bx:bx + W], region_after)
    finally:
        viewer.kill()
