"""The preview's HTTP server: the page, its state as server-sent events, the image, the controls.

Python's own ``ThreadingHTTPServer`` on 127.0.0.1 only (one thread per connection; an
event stream holds its thread while the page is open). Server-sent events suffice: the
page receives state and sends a few small commands, so a WebSocket's two-way channel and
an extra dependency would buy nothing. Requests whose ``Host`` is not this server's
loopback address are refused (a web page elsewhere cannot reach it by DNS rebinding), and
commands are JSON ``POST``\\ s, which a page of another origin cannot send without asking.

    GET  /                       the page (static/index.html, app.js, style.css)
    GET  /events                 text/event-stream: an ``state`` event (JSON, Session.state())
                                 at once and after every change; a comment every 10 s
    GET  /state                  the same JSON once
    GET  /frame.png?exposure=E   the current frame, sRGB 8-bit, radiance times 2**E
                                 (debug views as they are); header X-Frame: its id
    GET  /frame.pfm              the current frame as float32 PFM (linear, as rendered)
    GET  /pixel?x=X&y=Y          {"x", "y", "value": [r, g, b], "object", "material"}
    GET  /camera.json            the preview's camera as a scene's "camera" entry
    POST /camera                 {"orbit": [yaw, pitch]} | {"dolly": factor} | {"set": {...}} | {"reset": true}
    POST /mode                   {"mode": "color" | "objects" | "materials" | "normals" | "cost" | "nan"}
    POST /time                   {"t": seconds}
    POST /save                   {"format": "png" | "exr", "exposure": E} -> {"path": ...}

Bad requests get status 400 and ``{"error": one line}``.
"""
import json
import pathlib
import threading
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from userio.errors import UserError

from .session import error_line

STATIC = pathlib.Path(__file__).with_name("static")
PAGES = {"/": ("index.html", "text/html; charset=utf-8"),
         "/index.html": ("index.html", "text/html; charset=utf-8"),
         "/app.js": ("app.js", "text/javascript; charset=utf-8"),
         "/style.css": ("style.css", "text/css; charset=utf-8")}
KEEPALIVE_S = 10.0
MAX_BODY = 1 << 16


class ViewServer(ThreadingHTTPServer):
    """Serves ``session`` on 127.0.0.1:``port`` (0: a free port); saves go to ``save_dir``."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, session, port=0, save_dir="."):
        self.session = session
        self.save_dir = pathlib.Path(save_dir)
        self.stopping = threading.Event()
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def port(self):
        return self.server_address[1]

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/"

    def hosts(self):
        return {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def handle_error(self, request, client_address):
        pass          # a connection that broke off: nothing for the user's terminal


class _BadRequest(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    server_version = "raytrace-view"

    def log_message(self, format, *args):    # noqa: A002 - the base class's name
        pass                                 # no line per request in the user's terminal

    # -------------------------------------------------------------------------- plumbing
    def _send(self, status, body, content_type, headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, value, status=HTTPStatus.OK):
        self._send(status, json.dumps(value).encode(), "application/json")

    def _error(self, status, line):
        self._json({"error": line}, status)

    def _host_ok(self):
        if self.headers.get("Host", "") in self.server.hosts():
            return True
        self._error(HTTPStatus.FORBIDDEN, "this preview answers only on its loopback address")
        return False

    def _query(self):
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)

    def _body(self):
        if self.headers.get_content_type() != "application/json":
            raise _BadRequest("commands are JSON (Content-Type: application/json)")
        try:
            n = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            raise _BadRequest("bad Content-Length") from None
        if not 0 <= n <= MAX_BODY:
            raise _BadRequest(f"a command is at most {MAX_BODY} bytes")
        try:
            value = json.loads(self.rfile.read(n) or b"null")
        except (ValueError, UnicodeDecodeError) as exc:
            raise _BadRequest(f"not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise _BadRequest("a command is a JSON object")
        return value

    def _answer(self, handler, route):
        """Run ``handler(route)``; a bad request is answered 400 with its one line, a bug
        500 with its one line (never a traceback)."""
        try:
            handler(route)
        except _BadRequest as exc:
            self._error(HTTPStatus.BAD_REQUEST, str(exc))
        except (UserError, OSError) as exc:
            self._error(HTTPStatus.BAD_REQUEST, error_line(exc))
        except Exception as exc:  # noqa: BLE001 - a bug: one line to the page, no traceback
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, error_line(exc))

    # -------------------------------------------------------------------------- GET
    def do_GET(self):
        if not self._host_ok():
            return
        self._answer(self._get, urllib.parse.urlsplit(self.path).path)

    def _get(self, route):
        if route in PAGES:
            name, kind = PAGES[route]
            return self._send(HTTPStatus.OK, (STATIC / name).read_bytes(), kind)
        if route == "/events":
            return self._events()
        if route == "/state":
            return self._json(self.server.session.state())
        if route in ("/frame.png", "/frame.pfm"):
            return self._frame(route)
        if route == "/pixel":
            q = self._query()
            try:
                x, y = int(q["x"][0]), int(q["y"][0])
            except (KeyError, ValueError):
                raise _BadRequest("give integer x and y") from None
            return self._json(self.server.session.pixel(x, y))
        if route == "/camera.json":
            cam = self.server.session.camera
            if cam is None:
                raise _BadRequest("no scene is loaded yet")
            from .orbit import snippet
            return self._send(HTTPStatus.OK, snippet(cam).encode(), "application/json")
        self._error(HTTPStatus.NOT_FOUND, f"no such page: {route}")

    do_HEAD = do_GET

    def _frame(self, route):
        from ..image import pfm_bytes
        f = self.server.session.frame
        if f is None:
            return self._error(HTTPStatus.NOT_FOUND, "no image yet")
        headers = [("X-Frame", str(f.id)), ("X-Generation", str(f.generation))]
        if route == "/frame.pfm":
            return self._send(HTTPStatus.OK, pfm_bytes(f.image), "application/octet-stream", headers)
        q = self._query()
        try:
            exposure = float(q.get("exposure", ["0"])[0])
        except ValueError:
            raise _BadRequest("exposure must be a number") from None
        if not -30.0 <= exposure <= 30.0:
            raise _BadRequest("exposure must be within -30 .. 30 stops")
        self._send(HTTPStatus.OK, f.png(exposure), "image/png", headers)

    def _events(self):
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        session, version = self.server.session, -1
        try:
            while not session.closed and not self.server.stopping.is_set():
                state = session.wait(version, KEEPALIVE_S)
                if state["version"] == version:
                    self.wfile.write(b": keep-alive\n\n")
                else:
                    version = state["version"]
                    self.wfile.write(b"event: state\ndata: " + json.dumps(state).encode() + b"\n\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            pass                              # the page closed
        self.close_connection = True

    # -------------------------------------------------------------------------- POST
    def do_POST(self):
        if not self._host_ok():
            return
        self._answer(self._post, urllib.parse.urlsplit(self.path).path)

    def _post(self, route):
        session = self.server.session
        body = self._body()
        if route == "/camera":
            if "orbit" in body:
                move = body["orbit"]
                if not (isinstance(move, list) and len(move) == 2):
                    raise _BadRequest("orbit is [yaw, pitch] in degrees")
                session.orbit(*move)
            elif "dolly" in body:
                session.dolly(body["dolly"])
            elif "set" in body:
                session.set_camera(body["set"])
            elif body.get("reset") is True:
                session.reset_camera()
            else:
                raise _BadRequest("give orbit, dolly, set or reset")
            return self._json({"camera": session.camera})
        if route == "/mode":
            session.set_mode(body.get("mode"))
            return self._json({"mode": body.get("mode")})
        if route == "/time":
            session.set_time(body.get("t"))
            return self._json({"time": body.get("t")})
        if route == "/save":
            path = session.save(body.get("format"), self.server.save_dir, body.get("exposure", 0.0))
            return self._json({"path": str(path)})
        self._error(HTTPStatus.NOT_FOUND, f"no such command: {route}")
