"""The DevTools-pipe client in tests/cdp.py, against tiny pages served from 127.0.0.1."""
import functools
import http.server
import threading
import time

import imageio.v3 as iio
import numpy as np
import pytest

from cdp import Browser, CDPError, find_chromium

W, H = 640, 400

PAGES = {
    "compute.html": """<!doctype html><title>compute</title>
<script>window.answer = [1, 2, 3, 4].reduce((a, b) => a * b, 1) + 0.5;</script>""",
    # records the mouse events of a full-viewport area, in viewport (client) coordinates
    "mouse.html": """<!doctype html><html><body style="margin:0">
<div id="area" style="width:100vw;height:100vh"></div>
<script>
window.log = [];
const area = document.getElementById("area");
for (const type of ["mousedown", "mousemove", "mouseup", "click"])
  area.addEventListener(type, e => log.push({type, x: e.clientX, y: e.clientY, buttons: e.buttons}));
area.addEventListener("wheel", e => { log.push({type: "wheel", x: e.clientX, y: e.clientY, dy: e.deltaY});
                                      e.preventDefault(); }, {passive: false});
</script></body></html>""",
    "colour.html": """<!doctype html><html><body style="margin:0;background:rgb(255,255,255)">
<div style="position:absolute;left:40px;top:30px;width:200px;height:100px;background:rgb(0,128,255)"></div>
</body></html>""",
    "later.html": """<!doctype html><script>setTimeout(() => { window.done = "yes"; }, 300);</script>""",
}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Base URL of an http.server on 127.0.0.1 (a free port) serving PAGES."""
    root = tmp_path_factory.mktemp("pages")
    for name, text in PAGES.items():
        (root / name).write_text(text)
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=30)


@pytest.fixture(scope="module")
def browser():
    if find_chromium() is None:
        pytest.skip("no Chromium found (Debian: apt-get install chromium)")
    with Browser(width=W, height=H, timeout=120) as b:
        yield b


def test_evaluate_returns_values_computed_in_the_page(browser, server):
    browser.open(f"{server}/compute.html")
    assert browser.evaluate("window.answer") == 24.5
    assert browser.evaluate("document.title") == "compute"
    assert browser.evaluate("Promise.resolve([innerWidth, innerHeight])") == [W, H]
    assert browser.evaluate("({a: answer * 2, b: [true, null]})") == {"a": 49, "b": [True, None]}
    assert browser.evaluate("undefined") is None
    with pytest.raises(CDPError, match="ReferenceError"):
        browser.evaluate("notDefinedAnywhere + 1")


def test_drag_click_and_wheel_reach_the_page(browser, server):
    browser.open(f"{server}/mouse.html")
    browser.drag(100, 120, 300, 220, steps=10)
    log = browser.wait_for("log.some(e => e.type === 'mouseup') && log")
    down = [e for e in log if e["type"] == "mousedown"]
    up = [e for e in log if e["type"] == "mouseup"]
    moves = [e for e in log if e["type"] == "mousemove" and e["buttons"] == 1]
    assert len(down) == 1 and (down[0]["x"], down[0]["y"], down[0]["buttons"]) == (100, 120, 1)
    assert len(up) == 1 and (up[0]["x"], up[0]["y"]) == (300, 220)
    assert 1 <= len(moves) <= 10                  # 10 dispatched; Chromium may coalesce some
    assert (moves[-1]["x"], moves[-1]["y"]) == (300, 220)
    xs = [e["x"] for e in moves]
    assert xs == sorted(xs) and xs[0] > 100
    assert log.index(down[0]) < log.index(moves[0]) < log.index(up[0])

    browser.evaluate("log.length = 0")
    browser.click(50, 60)
    clicks = browser.wait_for("log.filter(e => e.type === 'click').length && log")
    assert [(e["x"], e["y"]) for e in clicks if e["type"] == "click"] == [(50, 60)]

    browser.wheel(200, 150, 120)
    wheel = browser.wait_for("log.find(e => e.type === 'wheel')")
    assert (wheel["x"], wheel["y"], wheel["dy"]) == (200, 150, 120)


def test_screenshot_has_the_viewport_size_and_the_page_colours(browser, server, output_dir):
    browser.open(f"{server}/colour.html")
    png = browser.screenshot()
    (output_dir / "colour.png").write_bytes(png)
    image = iio.imread(png)
    assert image.shape[:2] == (H, W)
    rgb = image[..., :3].astype(int)
    for y, x in [(30, 40), (80, 140), (129, 239)]:          # inside the div, corners included
        assert tuple(rgb[y, x]) == (0, 128, 255), (x, y)
    for y, x in [(29, 40), (30, 39), (130, 239), (80, 240), (0, 0), (H - 1, W - 1)]:
        assert tuple(rgb[y, x]) == (255, 255, 255), (x, y)
    assert np.count_nonzero(np.all(rgb == (0, 128, 255), axis=-1)) == 200 * 100


def test_wait_for_returns_the_value_once_truthy(browser, server):
    browser.open(f"{server}/later.html")
    assert browser.wait_for("window.done", deadline_s=60) == "yes"


def test_wait_for_times_out_naming_the_expression(browser, server):
    browser.open(f"{server}/compute.html")
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="window.neverSet === 1"):
        browser.wait_for("window.neverSet === 1", deadline_s=1)
    assert time.monotonic() - start < 60
