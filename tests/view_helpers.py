"""Scenes and clients for the live preview's tests (``raytrace view``).

Every wait has a deadline and waits for a signal (a state version, a line on stderr), never
a fixed time.
"""
import http.client
import json
import os
import pathlib
import re
import signal
import socket
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
DEADLINE = 300.0          # seconds: generous, for a busy machine with cold kernels
URL_LINE = re.compile(r"raytrace view: (http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)) ")
TOKEN_HEADER = "X-Raytrace-Token"
OWN = object()            # Viewer.request's default token: the viewer's own


def probe_scene(left=(0.9, 0.1, 0.1), right=(0.1, 0.3, 0.9), size=(64, 48)):
    """Two diffuse spheres side by side under one directional light, Whitted, no
    reflections: a sphere's colour shows in its own pixels only."""
    return {
        "camera": {"center": [0, 0, 6], "look_at": [0, 0, 0], "up": [0, 1, 0], "fov": 40},
        "image": {"width": size[0], "height": size[1], "spp": 1},
        "integrator": {"type": "whitted", "bounces": 0, "shadows": False},
        "background": {"color": [0.05, 0.05, 0.05], "ambient": [0.1, 0.1, 0.1]},
        "materials": {"left": {"diffuse": list(left)}, "right": {"diffuse": list(right)}},
        "lights": [{"type": "directional", "direction": [-0.3, -0.4, -1], "color": [1, 1, 1]}],
        "objects": [{"type": "sphere", "name": "left_ball", "center": [-1.1, 0, 0], "radius": 0.9,
                     "material": "left"},
                    {"type": "sphere", "name": "right_ball", "center": [1.1, 0, 0], "radius": 0.9,
                     "material": "right"}],
    }


def path_scene(spp=8, size=(32, 24)):
    """A small path-traced scene: a diffuse sphere on a plane under an area light."""
    return {
        "camera": {"center": [0, 1, 5], "look_at": [0, 0.5, 0], "up": [0, 1, 0], "fov": 45},
        "image": {"width": size[0], "height": size[1], "spp": spp},
        "integrator": {"type": "path", "max_depth": 4},
        "materials": {"white": {"type": "diffuse", "albedo": [0.8, 0.8, 0.8]}},
        "objects": [{"type": "sphere", "name": "ball", "center": [0, 0.6, 0], "radius": 0.6, "material": "white"},
                    {"type": "plane", "name": "floor", "normal": [0, 1, 0], "offset": 0, "material": "white"},
                    {"type": "sphere", "name": "lamp", "center": [0, 3, 1], "radius": 0.5, "material": "white",
                     "emission": [8, 8, 8]}],
    }


def textured_scene(folder, shade=200):
    """A quad whose MTL names a PNG texture (``tex/t.png``, grey ``shade``): three asset files."""
    (folder / "tex").mkdir(exist_ok=True)
    write_png(folder / "tex" / "t.png", shade)
    (folder / "m.mtl").write_text("newmtl painted\nKd 1 1 1\nmap_Kd tex/t.png\n")
    (folder / "q.obj").write_text("mtllib m.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\n"
                                  "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nusemtl painted\nf 1/1 2/2 3/3 4/4\n")
    return {"camera": {"center": [0, 0, 3], "look_at": [0, 0, 0]}, "image": {"width": 24, "height": 24, "spp": 1},
            "integrator": {"type": "whitted", "bounces": 0, "shadows": False},
            "lights": [{"type": "directional", "direction": [0, 0, -1]}],
            "objects": [{"type": "mesh", "name": "quad", "file": "q.obj"}]}


def write_png(path, shade):
    import imageio.v3 as iio
    tmp = path.with_name(path.name + ".tmp.png")
    iio.imwrite(tmp, np.full((4, 4, 3), shade, np.uint8))
    os.replace(tmp, path)


def write_scene(path, data):
    """Write ``data`` to ``path`` as an editor saving it would (a new file renamed over)."""
    path = pathlib.Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data) if not isinstance(data, str) else data)
    os.replace(tmp, path)


def done_after(generation=-1):
    """A state predicate: the current render of a generation after ``generation`` is finished."""
    def ok(state):
        f = state["frame"]
        return f is not None and f["stage"] == "done" and f["current"] and f["generation"] > generation
    return ok


def wait_state(session, predicate, deadline=DEADLINE, errors=False):
    """The first :meth:`Session.state` (of an in-process session) satisfying ``predicate``;
    a state with an error fails at once unless ``errors`` (the test waits for one)."""
    end = time.monotonic() + deadline
    state = session.state()
    while not predicate(state):
        assert errors or not state["error"], f"unexpected error: {state['error']}"
        left = end - time.monotonic()
        assert left > 0, f"state not reached before the deadline; last: {state}"
        state = session.wait(state["version"], min(left, 5.0))
    return state


# ------------------------------------------------------------------ the command, over HTTP
class Viewer:
    """``raytrace view SCENE --no-browser`` in a process group of its own (so Ctrl-C can be
    sent as a terminal does), with a client for its HTTP interface. ``env``: variables
    added to the environment (``PYTHONPATH`` of a copy of the package, to edit its code).
    ``url``, ``port`` and ``token``: from the address it printed; requests carry the token
    unless told otherwise. ``browser``: leave ``--no-browser`` out (the test sets what
    opens it: ``BROWSER`` in ``env``)."""

    def __init__(self, scene, *args, cwd=REPO, env=None, browser=False):
        sys.path.insert(0, str(REPO / "tests"))
        from interrupts import start
        flags = [] if browser else ["--no-browser"]
        self.proc = start(["-m", "raytrace", "view", str(scene), *flags, *map(str, args)], cwd, env)
        end = time.monotonic() + DEADLINE
        self.port = self.url = self.token = None
        while self.port is None:
            for line in list(self.proc.lines):
                m = URL_LINE.search(line)
                if m:
                    self.url, self.port, self.token = m.group(1), int(m.group(2)), m.group(3)
            if self.port is None:
                assert self.proc.poll() is None, f"raytrace view ended: {self.errors()}"
                assert time.monotonic() < end, "no address printed before the deadline"
                time.sleep(0.01)

    def errors(self):
        return [line for line in self.proc.lines if not line.startswith("import time:")]

    def request(self, method, path, body=None, headers=None, timeout=60, token=OWN):
        """(status, headers, body) of one request, with ``token`` in its header (default:
        the viewer's own; None: no token)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            hdrs = dict(headers or {})
            token = self.token if token is OWN else token
            if token is not None:
                hdrs.setdefault(TOKEN_HEADER, token)
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                hdrs.setdefault("Content-Type", "application/json")
            conn.request(method, path, body=data, headers=hdrs)
            reply = conn.getresponse()
            return reply.status, dict(reply.getheaders()), reply.read()
        finally:
            conn.close()

    def get_json(self, path):
        status, _, data = self.request("GET", path)
        return status, json.loads(data)

    def post(self, path, body):
        status, _, data = self.request("POST", path, body)
        return status, json.loads(data)

    def state(self):
        status, value = self.get_json("/state")
        assert status == 200, value
        return value

    def wait(self, predicate, deadline=DEADLINE, errors=False):
        """The first state satisfying ``predicate``, read from the event stream; a state
        with an error fails at once unless ``errors``."""
        with self.events() as events:
            end = time.monotonic() + deadline
            while True:
                state = events.next(end - time.monotonic())
                if predicate(state):
                    return state
                assert errors or not state["error"], f"unexpected error: {state['error']}"

    def events(self, token=OWN):
        """An :class:`EventStream` of this viewer (with its token unless told otherwise)."""
        return EventStream(self.port, self.token if token is OWN else token)

    def frame(self):
        """The current frame as (id, (H, W, 3) float32 linear radiance) from /frame.pfm."""
        from raytrace.image import read_pfm
        status, headers, data = self.request("GET", "/frame.pfm")
        assert status == 200, data
        import tempfile
        with tempfile.NamedTemporaryFile(suffix=".pfm", delete=False) as f:
            f.write(data)
        try:
            return int(headers["X-Frame"]), read_pfm(f.name)
        finally:
            os.unlink(f.name)

    def interrupt(self):
        """Ctrl-C as a terminal sends it -> (exit status, stderr lines without import times)."""
        from interrupts import finish
        os.killpg(self.proc.pid, signal.SIGINT)
        return finish(self.proc, timeout=120)

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class EventStream:
    """A client of ``/events`` (``token`` in its query, as the page sends it; None: none):
    :meth:`next` returns the next ``state`` event's JSON."""

    def __init__(self, port, token):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        query = "" if token is None else f"?token={token}"
        self.sock.sendall(f"GET /events{query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        self.buf = b""
        self.headers_done = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def next(self, deadline_s):
        end = time.monotonic() + deadline_s
        while True:
            if not self.headers_done and b"\r\n\r\n" in self.buf:
                head, self.buf = self.buf.split(b"\r\n\r\n", 1)
                assert b" 200 " in head.split(b"\r\n")[0], head
                assert b"text/event-stream" in head
                self.headers_done = True
            if self.headers_done and b"\n\n" in self.buf:
                event, self.buf = self.buf.split(b"\n\n", 1)
                lines = event.decode().split("\n")
                if "event: state" in lines:
                    data = "".join(line[6:] for line in lines if line.startswith("data: "))
                    return json.loads(data)
                continue                       # a keep-alive comment
            left = end - time.monotonic()
            assert left > 0, "no event before the deadline"
            self.sock.settimeout(min(left, 30.0))
            chunk = self.sock.recv(65536)
            assert chunk, "the event stream closed"
            self.buf += chunk
