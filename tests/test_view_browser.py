"""The live preview in a real browser (headless Chromium through tests/cdp.py): the page
loads and shows the image, an edit of the scene file changes the picture where the edit
is and nowhere else, a drag orbits the camera, the wheel dollies, hovering names the
object, a broken edit shows its one line; the page works under its Content-Security-Policy,
another site's page cannot frame it, and numbers out of range leave it updating (issue 39,
rows 1 and 3); the address printed (with its token) works, and neither that address without
its token nor a page of another origin can drive the preview (issue 43). Screenshots go to
tests/output/ to be looked at."""
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from cdp import Browser, find_chromium
from raytrace.view import protocol
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


def _a_frame_shown(browser):
    """Wait until the page shows a frame (any: the scene may have been loaded again
    meanwhile) -> its id."""
    return browser.wait_for("document.getElementById('frame').dataset.frame", deadline_s=DEADLINE)


def _moves_sent(browser):
    """Wait until the page has posted every camera move of a gesture (a drag sends several:
    on a busy machine the first may be rendered to the end before the next arrives, and
    the frame to wait for is the last move's)."""
    browser.wait_for("!sending && move.yaw === 0 && move.pitch === 0 && move.dolly === 1",
                     deadline_s=DEADLINE)


def test_page_edit_drag_wheel_hover_and_error(tmp_path, chromium, output_dir):
    import raytrace
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene(size=(W, H)))
    viewer = Viewer(path)
    try:
        with Browser(900, 560, timeout=120, chromium=chromium) as browser:
            browser.open(viewer.url)
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
            _moves_sent(browser)
            orbited = viewer.wait(lambda s: s["camera_overridden"] and s["camera"]["center"][0] < -1.0
                                  and done_after(edited["generation"])(s))
            _shown(browser, orbited["frame"]["id"])
            _shot(browser, output_dir / "3_orbited.png")
            distance = np.linalg.norm(orbited["camera"]["center"])
            assert distance == pytest.approx(6.0)

            # the wheel dollies: away from the look-at point on a positive delta
            browser.wheel(x0 + W // 2, y0 + H // 2, 300)
            _moves_sent(browser)
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


def _csp_reports(browser):
    """The console's entries so far (Log.enable replays them) that name the
    Content-Security-Policy: what the policy refused on the page."""
    browser.send("Log.enable")
    browser.evaluate("1")                          # the replayed entries arrive before this reply
    return [e["params"]["entry"]["text"] for e in browser._events
            if e.get("method") == "Log.entryAdded" and "Content Security Policy" in e["params"]["entry"]["text"]]


def _foreign_site(viewer_port):
    """Another site's page (http://localhost:PORT, another origin than 127.0.0.1) with two
    frames: the preview itself, and a copy of the preview's page and style served by that
    site without the preview's headers (the control: a page that can be framed)."""
    def fetch(path):
        return viewer_request(viewer_port, path)

    page = (f'<iframe id="preview" src="http://127.0.0.1:{viewer_port}/" width="400" height="300" '
            f'onload="this.dataset.loaded=1"></iframe>'
            '<iframe id="copy" src="/copy/" width="400" height="300" '
            'onload="this.dataset.loaded=1"></iframe>').encode()
    return _local_site(lambda path: {"/": (page, "text/html"), "/copy/": (fetch("/"), "text/html"),
                                     "/copy/style.css": (fetch("/style.css"), "text/css")}.get(path))


def _local_site(route):
    """A web server on 127.0.0.1 (a port of its own) whose GET of a path answers
    ``route(path)``: (body, content type), or None for a 404."""
    class Site(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            found = route(self.path)
            body, kind = found if found is not None else (b"", "text/plain")
            self.send_response(200 if found is not None else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    site = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    return site


def viewer_request(port, path):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path)
        return conn.getresponse().read()
    finally:
        conn.close()


def _mean_in(browser, shot, element_id):
    box = json.loads(browser.evaluate(
        f"JSON.stringify(document.getElementById('{element_id}').getBoundingClientRect())"))
    x, y, w, h = (round(box[k]) for k in ("x", "y", "width", "height"))
    return shot[y + 4:y + h - 4, x + 4:x + w - 4].mean()


def test_another_site_cannot_frame_the_preview(tmp_path, chromium, output_dir):
    """Row 1: a page of another site embeds the preview in a frame, as a clickjacking page
    would: the browser refuses to show it (X-Frame-Options, CSP frame-ancestors), while a
    copy of the same page without those headers shows in the frame beside it."""
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene(size=(W, H)))
    viewer = Viewer(path)
    site = None
    try:
        viewer.wait(done_after())
        site = _foreign_site(viewer.port)
        with Browser(900, 400, timeout=120, chromium=chromium) as browser:
            browser.open(f"http://localhost:{site.server_address[1]}/")
            browser.wait_for("[...document.querySelectorAll('iframe')].every((f) => f.dataset.loaded)",
                             deadline_s=DEADLINE)
            shot = _shot(browser, output_dir / "7_framed_by_another_site.png")
            assert _mean_in(browser, shot, "copy") < 60              # the page's dark background: framed
            assert _mean_in(browser, shot, "preview") > 150          # Chromium's light "refused" page
    finally:
        if site is not None:
            site.shutdown()
        viewer.kill()


def test_the_page_works_under_its_policy_and_survives_numbers_out_of_range(tmp_path, chromium, output_dir):
    """Rows 1 and 3 in the page: nothing on it is refused by its Content-Security-Policy;
    numbers no camera can take are refused with their line and change nothing; the wheel
    turned far beyond the largest distance leaves a finite camera; the page goes on
    showing every new frame (a camera at Infinity once stopped it: its JSON.parse failed)."""
    import raytrace.view.orbit as orbit
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene(size=(W, H)))
    viewer = Viewer(path)
    try:
        with Browser(900, 560, timeout=120, chromium=chromium) as browser:
            browser.open(viewer.url)
            first = viewer.wait(done_after())
            _shown(browser, first["frame"]["id"])
            assert _csp_reports(browser) == []
            replies = browser.evaluate("""Promise.all(['{"dolly": 1e308}', '{"dolly": 1e999}',
                '{"orbit": [1e308, 0]}'].map((body) => fetch('/camera', {method: 'POST',
                headers: {'Content-Type': 'application/json', 'X-Raytrace-Token': TOKEN}, body})
                .then(async (r) => [r.status, (await r.json()).error])))""")
            assert replies == [[400, "dolly: must be within 0.001 .. 1000, got 1e+308"],
                               [400, "numbers must be finite, got 1e999"],
                               [400, "orbit: must be within -360 .. 360, got 1e+308"]]
            assert viewer.state()["generation"] == first["generation"]
            box = json.loads(browser.evaluate(
                "JSON.stringify(document.getElementById('frame').getBoundingClientRect())"))
            x, y = round(box["x"]) + W // 2, round(box["y"]) + H // 2
            for _ in range(80):                  # 1.1^5 each: together far beyond the largest distance
                browser.wheel(x, y, 500)
            _moves_sent(browser)     # else a later move's frame replaces the one waited for
            far = viewer.wait(lambda s: np.linalg.norm(s["camera"]["center"]) >= orbit.MAX_DISTANCE * (1 - 1e-9)
                              and done_after(first["generation"])(s))
            _shown(browser, far["frame"]["id"])
            assert browser.evaluate("document.getElementById('saved').textContent") == ""   # none refused
            snippet = json.loads(viewer.request("GET", "/camera.json")[2])["camera"]
            assert np.isfinite(snippet["center"]).all()
            # and the page still follows: an edit of the file shows
            write_scene(path, probe_scene(left=(0.1, 0.9, 0.1), size=(W, H)))
            edited = viewer.wait(done_after(far["generation"]))
            _shown(browser, edited["frame"]["id"])
            assert int(browser.evaluate("document.body.dataset.version")) >= edited["version"]
            _shot(browser, output_dir / "8_after_numbers_out_of_range.png")
            assert _csp_reports(browser) == []
    finally:
        viewer.kill()


# ------------------------------------------------------------------ issue 43: only the owner drives it
def test_the_printed_address_works_and_the_page_without_its_token_shows_nothing(tmp_path, chromium, output_dir):
    """The address raytrace view prints (and the file it gives the browser, which redirects
    there) shows the frame; the same page without the token, or with a wrong one, shows
    the server's one line and no image. Each half is the other's control: the first shows
    that the check (an image on the page, its frame id) sees a frame when one comes."""
    from raytrace.view.cli import _redirect_file, _remove_redirect
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene(size=(W, H)))
    viewer = Viewer(path)
    try:
        first = viewer.wait(done_after())
        with Browser(900, 560, timeout=120, chromium=chromium) as browser:
            browser.open(viewer.url)
            assert int(_a_frame_shown(browser)) >= first["frame"]["id"]
            assert not browser.evaluate("document.getElementById('frame').hidden")
            _shot(browser, output_dir / "9_printed_address.png")

            page = _redirect_file(viewer.url)                 # what the browser is given to open
            try:
                assert oct(page.stat().st_mode & 0o777) == "0o600"
                assert oct(page.parent.stat().st_mode & 0o777) == "0o700"
                browser.open(page.as_uri())
                browser.wait_for(f"location.href === {json.dumps(viewer.url)}", deadline_s=DEADLINE)
                assert int(_a_frame_shown(browser)) >= first["frame"]["id"]
            finally:
                _remove_redirect(page)
            assert not page.parent.exists()

            for address in (f"http://127.0.0.1:{viewer.port}/", f"http://127.0.0.1:{viewer.port}/?token=wrong",
                            f"http://127.0.0.1:{viewer.port}/?token={viewer.token[:-1]}"):
                browser.open(address)
                browser.wait_for(f"document.getElementById('status').textContent === {json.dumps(protocol.NO_TOKEN)}",
                                 deadline_s=DEADLINE)
                assert browser.evaluate("document.getElementById('frame').dataset.frame === undefined "
                                        "&& document.getElementById('frame').hidden"), address
                assert browser.evaluate("document.getElementById('empty').hidden") is False
            _shot(browser, output_dir / "10_address_without_token.png")
    finally:
        viewer.kill()


# The same attempt to drive the preview, run from another origin's page and from the
# preview's own: a command, a plain POST (no preflight), the state, a frame, a save and the
# event stream -> what each gave: a status, or "failed" (the browser refused it).
ATTEMPT = """async (base, token) => {
  const header = token === null ? {} : {"X-Raytrace-Token": token};
  const query = token === null ? "" : `?token=${encodeURIComponent(token)}`;
  const json = {...header, "Content-Type": "application/json"};
  const out = {};
  const settle = async (name, request) => {
    try {
      out[name] = (await request).status;
    } catch (e) {
      out[name] = "failed";
    }
  };
  await settle("command", fetch(base + "/mode", {method: "POST", headers: json, body: '{"mode": "normals"}'}));
  await settle("plain post", fetch(base + "/mode" + query, {method: "POST", mode: "no-cors",
                                   headers: {"Content-Type": "text/plain"}, body: '{"mode": "normals"}'}));
  await settle("state", fetch(base + "/state", {headers: header}));
  await settle("state, query", fetch(base + "/state" + query));
  await settle("frame", fetch(base + "/frame.png" + query));
  await settle("save", fetch(base + "/save", {method: "POST", headers: json, body: '{"format": "png"}'}));
  out.events = await new Promise((done) => {
    const events = new EventSource(base + "/events" + query);
    events.onopen = () => { events.close(); done("open"); };
    events.onerror = () => { events.close(); done("failed"); };
  });
  return out;
}"""


def _other_origin():
    """A page on another port of 127.0.0.1 (another origin) that defines ATTEMPT."""
    page = f"<!doctype html><title>another origin</title><script>window.attempt = {ATTEMPT};</script>".encode()
    return _local_site(lambda path: (page, "text/html") if path == "/" else None)


def _answers(browser, port, since):
    """What the preview's server answered (the status on the wire, seen through the
    DevTools Network domain even where the page may not read it) to each request the page
    made to it after event number ``since`` -> sorted [(method, path, status)], status
    "not sent" for a request whose preflight failed (it never left the browser); waits,
    with a deadline, until every request has its outcome."""
    end = time.monotonic() + DEADLINE
    prefix = f"http://127.0.0.1:{port}/"
    while True:
        events = list(browser._events)[since:]
        params = lambda name: [e["params"] for e in events if e.get("method") == name]   # noqa: E731
        sent = {p["requestId"]: p["request"] for p in params("Network.requestWillBeSent")
                if p["request"]["url"].startswith(prefix)}
        outcome = {p["requestId"]: "not sent" for p in params("Network.loadingFailed")
                   if (p.get("corsErrorStatus") or {}).get("corsError", "").startswith("Preflight")}
        outcome.update({p["requestId"]: p["statusCode"] for p in params("Network.responseReceivedExtraInfo")})
        if sent and all(rid in outcome for rid in sent):
            return sorted(((r["method"], r["url"][len(prefix) - 1:].split("?")[0], outcome[rid])
                           for rid, r in sent.items()), key=str)
        assert time.monotonic() < end, f"no outcome for {[r['url'] for rid, r in sent.items() if rid not in outcome]}"
        browser.evaluate("1")                              # let the events of the meantime arrive
        time.sleep(0.05)


def test_a_page_of_another_origin_cannot_drive_the_preview(tmp_path, chromium, output_dir):
    """A page served from another port (another origin) tries to drive the preview: a
    command, a save, the state, a frame, the event stream. Everything fails in the page,
    nothing changes, and the server answered every request that reached it with 403 (a
    command with a preflight never left the browser: its OPTIONS got 405). Controls: the
    same page given the token is answered 200 where only the browser's CORS stands in the
    way (so the 403s are the token's), and the same script in the preview's own page with
    the token changes the mode, writes a file and follows the stream (so the checks would
    see a drive)."""
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene(size=(W, H)))
    out = tmp_path / "saved"
    out.mkdir()
    viewer = Viewer(path, "--save-dir", out)
    site = None
    try:
        first = viewer.wait(done_after())
        untouched = lambda s: (s["mode"], s["camera_overridden"], s["time"])     # noqa: E731
        site = _other_origin()
        base = json.dumps(f"http://127.0.0.1:{viewer.port}")
        with Browser(900, 560, timeout=120, chromium=chromium) as browser:
            browser.open(f"http://127.0.0.1:{site.server_address[1]}/")
            browser.send("Network.enable")
            since = len(browser._events)
            tried = browser.evaluate(f"window.attempt({base}, null)")
            assert tried == {name: "failed" for name in ("command", "plain post", "state", "state, query",
                                                         "frame", "save", "events")}, tried
            answers = _answers(browser, viewer.port, since)
            assert answers == sorted([("OPTIONS", "/mode", 405), ("POST", "/mode", "not sent"),
                                      ("POST", "/mode", 403), ("GET", "/state", 403), ("GET", "/state", 403),
                                      ("GET", "/frame.png", 403), ("OPTIONS", "/save", 405),
                                      ("POST", "/save", "not sent"), ("GET", "/events", 403)],
                                     key=str), answers
            assert untouched(viewer.state()) == untouched(first) == ("color", False, first["time"])
            assert list(out.iterdir()) == []

            # control 1: given the token, the same page is answered where the browser lets
            # the request go (its CORS still keeps the answer from the page; commands still
            # meet the Origin check)
            since = len(browser._events)
            tried = browser.evaluate(f"window.attempt({base}, {json.dumps(viewer.token)})")
            assert set(tried.values()) == {"failed"}, tried
            answers = _answers(browser, viewer.port, since)
            assert ("GET", "/state", 200) in answers and ("GET", "/frame.png", 200) in answers, answers
            assert ("GET", "/events", 200) in answers and ("POST", "/mode", 403) in answers, answers
            assert untouched(viewer.state()) == untouched(first) == ("color", False, first["time"])
            assert list(out.iterdir()) == []

            # control 2: the same script in the preview's own page, with its token, drives it
            browser.open(viewer.url)
            _a_frame_shown(browser)
            tried = browser.evaluate(f"({ATTEMPT})('', TOKEN)")
            assert tried == {"command": 200, "plain post": 400, "state": 200, "state, query": 200, "frame": 200,
                             "save": 200, "events": "open"}, tried
            assert viewer.state()["mode"] == "normals" and len(list(out.iterdir())) == 1
            # and without the token, the preview's own page is refused too
            tried = browser.evaluate(f"({ATTEMPT})('', null)")
            assert tried == {"command": 403, "plain post": 403, "state": 403, "state, query": 403, "frame": 403,
                             "save": 403, "events": "failed"}, tried
            assert len(list(out.iterdir())) == 1
            _shot(browser, output_dir / "11_driven_by_its_own_page.png")
    finally:
        if site is not None:
            site.shutdown()
        viewer.kill()
