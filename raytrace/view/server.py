"""The preview's HTTP server: the page, its state as server-sent events, the image, the controls.

Python's own ``http.server`` (one thread per connection) with the limits of
:mod:`raytrace.view.protocol`: deadlines, a cap on connections, one JSON line for every
error, headers against framing and sniffing, requests only to its loopback address and
commands only from its own page. Server-sent events suffice: the page receives state and
sends a few small commands, so a WebSocket's two-way channel and an extra dependency
would buy nothing. At most :data:`MAX_STREAMS` event streams are open at once (the next
is refused at once; the page and the rest are still served); a stream whose page has gone
is closed within :data:`STREAM_POLL_S` seconds.

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

HEAD is GET without the body. Every route but the page's own files (``/``,
``/index.html``, ``/app.js``, ``/style.css``) needs the session's token: header
``X-Raytrace-Token`` or query ``token=`` (403 and one JSON line without it). Bad requests
get status 400 and ``{"error": one line}``; every number is bounded where it enters
(:mod:`raytrace.view.commands`).
"""
import pathlib
import select
import socket
import threading
import time
import urllib.parse
from http import HTTPStatus

from userio.errors import UserError

from . import commands
from .commands import BadRequest
from .protocol import TOKEN_PARAM, Handler, HeadTooLarge, ReadTimeout, Server, json_line
from .session import error_line

STATIC = pathlib.Path(__file__).with_name("static")
PAGES = {"/": ("index.html", "text/html; charset=utf-8"),
         "/index.html": ("index.html", "text/html; charset=utf-8"),
         "/app.js": ("app.js", "text/javascript; charset=utf-8"),
         "/style.css": ("style.css", "text/css; charset=utf-8")}
KEEPALIVE_S = 10.0           # a comment on an idle event stream this often
STREAM_POLL_S = 1.0          # an event stream looks for its page this often
MAX_STREAMS = 8              # event streams (open pages) at once


class ViewServer(Server):
    """Serves ``session`` (set before :meth:`serve_forever`) on 127.0.0.1:``port`` (0: a
    free port) to whoever has ``token`` (default: a new secret); saves go to ``save_dir``."""
    open_paths = frozenset(PAGES)              # the page and its files: no secret in them

    def __init__(self, port=0, save_dir=".", session=None, token=None):
        self.session = session
        self.save_dir = pathlib.Path(save_dir)
        self.stopping = threading.Event()
        self.streams = threading.BoundedSemaphore(MAX_STREAMS)
        self.saving = threading.Lock()         # held while a save writes (Ctrl-C waits for it)
        super().__init__(port, _Handler, token)

    @property
    def url(self):
        """The page's address with the token, as printed and opened (the page reads the
        token from it and sends it with every request)."""
        return f"http://127.0.0.1:{self.port}/?{TOKEN_PARAM}={self.token}"


def _gone(sock):
    """True when the client has closed its end of ``sock``."""
    try:
        if not select.select([sock], [], [], 0)[0]:
            return False
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


class _Handler(Handler):
    # -------------------------------------------------------------------------- plumbing
    def _answer(self, handler, route):
        """Run ``handler(route)``; a bad request is answered 400 with its one line, a bug
        500 with its one line (never a traceback)."""
        try:
            handler(route)
        except (ReadTimeout, HeadTooLarge, ConnectionError, TimeoutError):
            raise                             # the protocol's: Handler.handle answers them
        except BadRequest as exc:
            self.refuse(HTTPStatus.BAD_REQUEST, str(exc))
        except (UserError, OSError) as exc:
            self.refuse(HTTPStatus.BAD_REQUEST, error_line(exc))
        except Exception as exc:  # noqa: BLE001 - a bug: one line to the page, no traceback
            self.refuse(HTTPStatus.INTERNAL_SERVER_ERROR, error_line(exc))

    def _query(self):
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)

    def _param(self, name, default=None):
        values = self._query().get(name)
        if values is None and default is None:
            raise BadRequest(f"give {name}")
        return values[0] if values else default

    # -------------------------------------------------------------------------- GET, HEAD
    def do_GET(self):
        self._answer(self._get, urllib.parse.urlsplit(self.path).path)

    def _get(self, route):
        session = self.server.session
        if route in PAGES:
            name, kind = PAGES[route]
            return self.send(HTTPStatus.OK, (STATIC / name).read_bytes(), kind)
        if route == "/events":
            return self._events()
        if route == "/state":
            return self.send_json(session.state())
        if route in ("/frame.png", "/frame.pfm"):
            return self._frame(route)
        if route == "/pixel":
            x = commands.query_int(self._param("x"), "x and y")
            y = commands.query_int(self._param("y"), "x and y")
            return self.send_json(session.pixel(x, y))
        if route == "/camera.json":
            cam = session.camera
            if cam is None:
                raise BadRequest("no scene is loaded yet")
            from .orbit import snippet
            return self.send(HTTPStatus.OK, snippet(cam).encode(), "application/json")
        self.refuse(HTTPStatus.NOT_FOUND, f"no such page: {route[:100]}")

    def _frame(self, route):
        from ..image import pfm_bytes
        f = self.server.session.frame
        if f is None:
            return self.refuse(HTTPStatus.NOT_FOUND, "no image yet")
        headers = [("X-Frame", str(f.id)), ("X-Generation", str(f.generation))]
        if route == "/frame.pfm":
            return self.send(HTTPStatus.OK, pfm_bytes(f.image), "application/octet-stream", headers)
        exposure = commands.query_number(self._param("exposure", "0"), "exposure", *commands.EXPOSURE)
        self.send(HTTPStatus.OK, f.png(exposure), "image/png", headers)

    def _events(self):
        server, session = self.server, self.server.session
        if not server.streams.acquire(blocking=False):
            return self.refuse(HTTPStatus.SERVICE_UNAVAILABLE,
                               f"{MAX_STREAMS} pages already follow this preview: close one")
        try:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command == "HEAD":
                return
            version, last = -1, time.monotonic()
            while not session.closed and not server.stopping.is_set():
                state = session.wait(version, STREAM_POLL_S)
                if state["version"] != version:
                    version = state["version"]
                    self.wfile.write(b"event: state\ndata: " + json_line(state) + b"\n")
                    last = time.monotonic()
                elif time.monotonic() - last >= KEEPALIVE_S:
                    self.wfile.write(b": keep-alive\n\n")
                    last = time.monotonic()
                if _gone(self.connection):
                    return                    # the page closed
        finally:
            server.streams.release()

    # -------------------------------------------------------------------------- POST
    def do_POST(self):
        if self.headers.get_content_type() != "application/json":
            return self.refuse(HTTPStatus.BAD_REQUEST, "commands are JSON (Content-Type: application/json)")
        data = self.read_body(commands.MAX_BODY)
        if data is not None:
            self._answer(lambda route: self._post(route, data), urllib.parse.urlsplit(self.path).path)

    def _post(self, route, data):
        session = self.server.session
        body = commands.parse_command(data)
        if route == "/camera":
            if "orbit" in body:
                move = body["orbit"]
                if not (isinstance(move, list) and len(move) == 2):
                    raise BadRequest("orbit is [yaw, pitch] in degrees")
                session.orbit(*(commands.number(a, "orbit", *commands.ANGLE) for a in move))
            elif "dolly" in body:
                session.dolly(commands.number(body["dolly"], "dolly", *commands.DOLLY))
            elif "set" in body:
                session.set_camera(commands.camera_numbers(body["set"]))
            elif body.get("reset") is True:
                session.reset_camera()
            else:
                raise BadRequest("give orbit, dolly, set or reset")
            return self.send_json({"camera": session.camera})
        if route == "/mode":
            session.set_mode(body.get("mode"))
            return self.send_json({"mode": body.get("mode")})
        if route == "/time":
            session.set_time(body.get("t"))
            return self.send_json({"time": body.get("t")})
        if route == "/save":
            exposure = commands.number(body.get("exposure", 0.0), "exposure", *commands.EXPOSURE)
            with self.server.saving:
                path = session.save(body.get("format"), self.server.save_dir, exposure)
            return self.send_json({"path": str(path)})
        self.refuse(HTTPStatus.NOT_FOUND, f"no such command: {route[:100]}")
