"""``raytrace view`` driven over HTTP as a browser would: the page, the event stream, the
image, edits of the scene and its assets, the controls, Ctrl-C, two viewers at once."""
import json
import socket
import subprocess
import sys

import numpy as np
import pytest

from view_helpers import REPO, done_after, probe_scene, textured_scene, write_png, write_scene



def test_page_first_image_and_the_probe_edit(tmp_path, viewers):
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene())
    v = viewers(path)
    status, headers, page = v.request("GET", "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html") and b"app.js" in page
    for asset in ("/app.js", "/style.css"):
        assert v.request("GET", asset)[0] == 200
    first = v.wait(done_after())
    status, headers, png = v.request("GET", "/frame.png")
    assert status == 200 and headers["Content-Type"] == "image/png" and png[:8] == b"\x89PNG\r\n\x1a\n"
    import imageio.v3 as iio
    assert iio.imread(png).shape == (48, 64, 3)
    fid, before = v.frame()
    assert fid == first["frame"]["id"] and before.shape == (48, 64, 3)
    hover = v.get_json("/pixel?x=14&y=24")[1]
    assert hover["object"].endswith("(left_ball)") and hover["material"] == "left"
    np.testing.assert_allclose(hover["value"], before[24, 14], rtol=1e-6)
    assert v.get_json("/pixel?x=1&y=1")[1]["object"] is None         # the background

    write_scene(path, probe_scene(left=(0.1, 0.9, 0.1)))                # the edit: one sphere's colour
    v.wait(done_after(first["generation"]))
    _, after = v.frame()
    changed = np.any(before != after, axis=-1)
    import raytrace
    scene = raytrace.load_scene(path)
    ids = raytrace.render(scene, aovs=["object_id"]).aovs["object_id"]
    left = [k for k, n in enumerate(scene.object_names) if n.endswith("(left_ball)")][0]
    assert changed.sum() > 100 and np.all(changed == (ids == left))    # those pixels, only those


def test_broken_edit_then_fix_over_http(tmp_path, viewers):
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene())
    v = viewers(path)
    first = v.wait(done_after())
    fid, image = v.frame()
    write_scene(path, '{"camera": {"center": [0, 0, 6], ')
    broken = v.wait(lambda s: s["error"] != "", errors=True)
    assert broken["error"].startswith(f"{path}: ") and "line 1" in broken["error"]
    assert broken["frame"]["id"] == fid
    assert np.array_equal(v.frame()[1], image)                          # the last good image stays
    write_scene(path, probe_scene(right=(0.9, 0.8, 0.1)))
    fixed = v.wait(lambda s: s["error"] == "" and done_after(first["generation"] + 1)(s), errors=True)
    assert fixed["frame"]["id"] > fid and not np.array_equal(v.frame()[1], image)
    code, lines = v.interrupt()
    assert code == 130
    text = "\n".join(lines)
    assert "Traceback" not in text
    assert f"raytrace view: error: {path}: line 1" in text                # the same line, in the terminal
    assert sum("error" in line for line in lines) == 1


def test_assets_are_watched_over_http(tmp_path, viewers):
    path = tmp_path / "t.json"
    write_scene(path, textured_scene(tmp_path, shade=200))
    v = viewers(path)
    first = v.wait(done_after())
    assert {p.split("/")[-1] for p in first["watched"]} == {"t.json", "q.obj", "m.mtl", "t.png"}
    _, before = v.frame()
    write_png(tmp_path / "tex" / "t.png", 40)
    v.wait(done_after(first["generation"]))
    _, after = v.frame()
    assert after[12, 12].mean() < 0.5 * before[12, 12].mean()


def test_controls_over_http(tmp_path, viewers):
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene())
    out = tmp_path / "saved"
    out.mkdir()
    v = viewers(path, "--save-dir", out)
    first = v.wait(done_after())
    status, reply = v.post("/camera", {"orbit": [30, 0]})
    assert status == 200 and reply["camera"]["center"][0] == pytest.approx(6 * np.sin(np.radians(30)))
    moved = v.wait(done_after(first["generation"]))
    assert moved["camera_overridden"]
    snippet = json.loads(v.request("GET", "/camera.json")[2])
    assert snippet["camera"]["center"] == pytest.approx(reply["camera"]["center"], rel=1e-6)
    assert v.post("/camera", {"reset": True})[0] == 200
    reset = v.wait(done_after(moved["generation"]))
    assert not reset["camera_overridden"] and reset["camera"]["center"] == [0.0, 0.0, 6.0]
    assert v.post("/mode", {"mode": "normals"})[0] == 200
    normals = v.wait(done_after(reset["generation"]))
    assert normals["frame"]["mode"] == "normals"
    status, reply = v.post("/save", {"format": "png"})
    assert status == 200 and reply["path"] == str(out / "probe-view-001.png")
    assert (out / "probe-view-001.png").is_file()
    # bad commands: 400 and one line, nothing changes
    for route, body, word in (("/camera", {"orbit": [1]}, "orbit"), ("/camera", {"dolly": -2}, "dolly"),
                              ("/mode", {"mode": "x"}, "mode"), ("/time", {"t": 1}, "not animated"),
                              ("/save", {"format": "gif"}, "png or exr"), ("/camera", {}, "orbit")):
        status, reply = v.post(route, body)
        assert status == 400 and word in reply["error"] and "\n" not in reply["error"], (route, reply)
    status, _, data = v.request("POST", "/mode", headers={"Content-Type": "text/plain"})
    assert status == 400 and b"JSON" in data
    assert v.request("GET", "/nothing")[0] == 404
    assert v.request("GET", "/pixel?x=1000&y=0")[0] == 400
    assert v.request("GET", "/frame.png?exposure=lots")[0] == 400
    assert v.request("GET", "/state", headers={"Host": "example.com"})[0] == 403     # DNS rebinding


def test_two_tabs_see_the_same_frames(tmp_path, viewers):
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene())
    v = viewers(path)
    first = v.wait(done_after())
    with v.events() as tab1, v.events() as tab2:
        assert tab1.next(60)["version"] == tab2.next(60)["version"]      # each gets the state at once
        write_scene(path, probe_scene(left=(0.5, 0.5, 0.5)))
        seen = []
        for tab in (tab1, tab2):
            while True:
                state = tab.next(300)
                if done_after(first["generation"])(state):
                    seen.append(state["frame"]["id"])
                    break
        assert seen[0] == seen[1]


def test_ctrl_c_exits_130_and_frees_the_port(tmp_path, viewers):
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene())
    v = viewers(path)
    v.wait(done_after())
    with v.events() as tab:                         # an open page must not keep it alive
        tab.next(60)
        code, lines = v.interrupt()
    assert code == 130
    assert lines[-1] == "raytrace view: stopped" and not any("Traceback" in line for line in lines)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", v.port), timeout=10)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", v.port))                   # the port is free again
    s.close()


def test_two_viewers_on_different_ports(tmp_path, viewers):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_scene(a, probe_scene())
    write_scene(b, probe_scene(left=(0.1, 0.1, 0.9)))
    va, vb = viewers(a), viewers(b)
    assert va.port != vb.port
    sa, sb = va.wait(done_after()), vb.wait(done_after())
    assert sa["scene"] == str(a) and sb["scene"] == str(b)
    assert not np.array_equal(va.frame()[1], vb.frame()[1])
    # each has a secret of its own (issue 43): one's token opens nothing of the other's
    assert va.token != vb.token and len(va.token) >= 43
    assert va.url == f"http://127.0.0.1:{va.port}/?token={va.token}"
    assert vb.request("GET", "/state", token=va.token)[0] == 403
    assert vb.request("GET", "/state")[0] == 200                                   # the control: its own
    taken = subprocess.run([sys.executable, "-m", "raytrace", "view", str(a), "--no-browser", "--port",
                            str(va.port)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert taken.returncode == 2                    # a port in use: one line
    assert taken.stderr.splitlines() == [f"raytrace: error: --port: 127.0.0.1:{va.port} is in use "
                                         "(--port 0 picks a free one)"]


@pytest.mark.parametrize("args, message", [
    (["nosuch.json"], "nosuch.json: file not found"),
    (["scenes/spheres.json", "--port", "70000"], "--port: must be within 0 .. 65535"),
    (["scenes/spheres.json", "--size", "0", "4"], "--size: width must be"),
    (["scenes/spheres.json", "--spp", "0"], "--spp"),
    (["scenes/spheres.json", "--save-dir", "no/such/folder"], "--save-dir: no/such/folder is not a folder"),
])
def test_bad_options_exit_2_with_one_line(args, message):
    out = subprocess.run([sys.executable, "-m", "raytrace", "view", *args, "--no-browser"], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("raytrace: error: ") and message in lines[0], lines
