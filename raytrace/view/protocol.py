"""HTTP for the preview: Python's ``http.server`` with the limits it leaves to its user.

:class:`Server` (a ``ThreadingHTTPServer`` on 127.0.0.1) and :class:`Handler` (a
``BaseHTTPRequestHandler``) add, for every connection and response:

- **one request per connection** (HTTP/1.0 answers; HTTP/1.0 and 1.1 requests are
  served, HTTP/0.9 and 2+ get 505), methods GET, HEAD and POST only (405 otherwise);
- **deadlines**: a request (line, headers and body) must arrive within :data:`REQUEST_S`
  seconds of its first byte (408 after that); a connection that sends nothing is closed
  without a word after :data:`IDLE_S` seconds (longer than a browser keeps a spare
  connection unused, so that the browser always closes it first); a response waits at
  most :data:`WRITE_S` seconds for a client that stops reading; a request's head is at
  most :data:`MAX_HEAD` bytes (431), its request line :data:`MAX_LINE` (414);
- **a cap**: at most :data:`MAX_CONNECTIONS` connections are served at once; the next
  is answered 503 at once, without a thread;
- **one JSON line** ``{"error": "..."}`` for every error, protocol errors included;
- **headers** that forbid framing and content sniffing on every response
  (:data:`SECURITY_HEADERS`);
- **addresses**: a request whose ``Host`` is not the server's loopback address is refused
  (403), and so is a ``POST`` whose ``Origin`` is another site's;
- **a token**: every request but those for :attr:`Server.open_paths` (the page and its
  files, which hold no secret) must carry the server's secret :attr:`Server.token`, in the
  header :data:`TOKEN_HEADER` or the query parameter :data:`TOKEN_PARAM` (the event
  stream and images, which a page cannot give headers); a request without it, or with a
  wrong one, is refused (403) before anything else is done for it. Tokens are compared
  with :func:`hmac.compare_digest`, in a time that does not depend on where they differ.

Subclasses implement ``do_GET`` and ``do_POST`` (``do_HEAD`` is ``do_GET`` without the
body) with :meth:`Handler.send`, :meth:`Handler.send_json` and :meth:`Handler.refuse`.
"""
import hmac
import io
import json
import math
import re
import secrets
import socket
import threading
import time
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from userio.cli import one_line

REQUEST_S = 5.0              # seconds for a request to arrive in full, from its first byte
IDLE_S = 20.0                # seconds a connection may stay silent (Chromium drops a spare one at 10)
WRITE_S = 10.0               # seconds a response waits for a client that does not read
MAX_CONNECTIONS = 32         # connections served at once
MAX_LINE = 8192              # bytes of the request line
MAX_HEAD = 1 << 16           # bytes of the request line and headers together
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = (("X-Frame-Options", "DENY"), ("X-Content-Type-Options", "nosniff"),
                    ("Content-Security-Policy", CSP), ("Cross-Origin-Resource-Policy", "same-origin"),
                    ("Referrer-Policy", "no-referrer"), ("Cache-Control", "no-store"))
METHODS = ("GET", "HEAD", "POST")
TOKEN_HEADER = "X-Raytrace-Token"   # where fetch() and commands carry the token
TOKEN_PARAM = "token"               # where the page's address, its event stream and images carry it
TOKEN_BYTES = 32                    # of randomness in a token (43 URL-safe characters)
NO_TOKEN = ("missing or wrong token: open the address that raytrace view printed "
            f"(it ends in ?{TOKEN_PARAM}=...)")
_VERSION = re.compile(r"HTTP/\d+(\.\d+)?")


class ReadTimeout(Exception):
    """The request did not arrive within its deadline."""


class HeadTooLarge(Exception):
    """The request's head is longer than :data:`MAX_HEAD`."""


def strict(value):
    """``value`` with every non-finite float replaced by None: what is sent is JSON that
    any parser reads (Python's ``json`` would write ``Infinity``)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    return value


def json_line(value):
    """``value`` as one line of strict JSON, newline included (bytes)."""
    return (json.dumps(strict(value), allow_nan=False) + "\n").encode()


def error_response(status, line):
    """The complete response (bytes) of an error: status line, headers, one JSON line."""
    body = json_line({"error": one_line(line)})
    head = [f"HTTP/1.0 {status.value} {status.phrase}", "Content-Type: application/json",
            f"Content-Length: {len(body)}", "Connection: close",
            *(f"{name}: {value}" for name, value in SECURITY_HEADERS)]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class _Reader(io.RawIOBase):
    """The socket's bytes, each read waiting at most until ``deadline``
    (``time.monotonic()``; from the first byte on, at most :data:`REQUEST_S` later), at
    most ``budget`` bytes in all."""

    def __init__(self, sock, deadline, budget):
        self.sock, self.deadline, self.budget = sock, deadline, budget
        self.received = 0

    def readable(self):
        return True

    def readinto(self, buf):
        if self.budget <= 0:
            raise HeadTooLarge
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ReadTimeout
        self.sock.settimeout(left)
        try:
            n = self.sock.recv_into(memoryview(buf)[:self.budget])
        except TimeoutError:
            raise ReadTimeout from None
        if n and not self.received:
            self.deadline = min(self.deadline, time.monotonic() + REQUEST_S)
        self.budget -= n
        self.received += n
        return n


class _Writer(io.RawIOBase):
    """Writes go out whole (``sendall``), each within the socket's timeout."""

    def __init__(self, sock):
        self.sock = sock

    def writable(self):
        return True

    def write(self, data):
        self.sock.sendall(data)
        return len(data)


def new_token():
    """A secret for one server: :data:`TOKEN_BYTES` random bytes, URL-safe text."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_matches(presented, token):
    """True when every value in ``presented`` (strings: the header's and the query's; at
    least one) is ``token``, compared in constant time."""
    expected = token.encode()
    return bool(presented) and all(hmac.compare_digest(p.encode("utf-8", "replace"), expected)
                                   for p in presented)


class Server(ThreadingHTTPServer):
    """HTTP on 127.0.0.1:``port`` (0: a free port) with ``handler``, at most
    :data:`MAX_CONNECTIONS` connections served at once, every request but those for
    :attr:`open_paths` asked for ``token`` (default: a new one, :func:`new_token`)
    (module docstring)."""
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 64
    open_paths = frozenset()          # paths served without the token (a subclass's page)

    def __init__(self, port, handler, token=None):
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.token = token or new_token()
        super().__init__(("127.0.0.1", port), handler)

    @property
    def port(self):
        return self.server_address[1]

    def hosts(self):
        """The ``Host`` values the server answers: its loopback address, by number or
        name, with the port (and without it on port 80, where clients leave it out)."""
        names = ("127.0.0.1", "localhost")
        hosts = {f"{name}:{self.port}" for name in names}
        return hosts | set(names) if self.port == 80 else hosts

    def origins(self):
        """The ``Origin`` values of the server's own page."""
        return {f"http://{host}" for host in self.hosts()}

    def process_request(self, request, client_address):
        if not self.slots.acquire(blocking=False):
            refuse_now(request, HTTPStatus.SERVICE_UNAVAILABLE,
                       f"more than {MAX_CONNECTIONS} connections are open: try again")
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request, client_address):
        pass          # a connection that broke off: nothing for the user's terminal


def refuse_now(sock, status, line):
    """Answer ``status`` and ``line`` on ``sock`` and close it, never waiting for the client."""
    try:
        sock.setblocking(False)
        try:
            sock.recv(MAX_HEAD)              # what has arrived, so that closing sends no reset
        except OSError:
            pass
        sock.send(error_response(status, line))
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.close()


class Handler(BaseHTTPRequestHandler):
    """One request per connection, within the limits of the module docstring."""
    server_version = "raytrace-view"
    protocol_version = "HTTP/1.0"
    default_request_version = "HTTP/1.0"

    def version_string(self):
        return self.server_version

    def log_message(self, format, *args):    # noqa: A002 - the base class's name
        pass                                 # no line per request in the user's terminal

    def setup(self):
        self.connection = self.request
        self.reader = _Reader(self.connection, time.monotonic() + IDLE_S, MAX_HEAD)
        self.rfile = io.BufferedReader(self.reader, 4096)
        self.wfile = _Writer(self.connection)
        self.responded = False

    def finish(self):
        self.rfile.close()

    # ------------------------------------------------------------------ one request
    def handle(self):
        self.close_connection = True
        self.command, self.requestline, self.request_version = "", "", "HTTP/1.0"
        try:
            self._handle()
        except ReadTimeout:
            # a connection that never said a word (a browser's spare one) is closed without one
            if self.reader.received:
                self._last_word(HTTPStatus.REQUEST_TIMEOUT, f"the request did not arrive within {REQUEST_S:g} s")
        except HeadTooLarge:
            self._last_word(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                            f"the request's line and headers are more than {MAX_HEAD} bytes")
        except (ConnectionError, TimeoutError):
            pass                             # the client went away, or stopped reading

    def _last_word(self, status, line):
        if not self.responded:
            try:
                self.connection.settimeout(1.0)
                self.refuse(status, line)
            except OSError:
                pass

    def _handle(self):
        line = self.rfile.readline(MAX_LINE + 1)
        if not line:
            return                           # connected, then closed without a word
        if len(line) > MAX_LINE:
            return self.refuse(HTTPStatus.REQUEST_URI_TOO_LONG, f"the request line is more than {MAX_LINE} bytes")
        self.raw_requestline = line
        words = line.decode("iso-8859-1").rstrip("\r\n").split()
        if len(words) == 2 or (len(words) == 3 and _VERSION.fullmatch(words[2])
                               and words[2] not in ("HTTP/1.0", "HTTP/1.1")):
            version = "HTTP/0.9" if len(words) == 2 else words[2]
            return self.refuse(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED,
                               f"{version} is not served: use HTTP/1.1 or HTTP/1.0")
        if len(words) != 3 or not _VERSION.fullmatch(words[2]):
            text = line.decode("iso-8859-1").strip()[:100]
            return self.refuse(HTTPStatus.BAD_REQUEST, f"bad request line: {text!r}")
        if not self.parse_request():         # answers its own errors through send_error
            return
        self.connection.settimeout(WRITE_S)  # from now on: the body's reads keep their deadline
        if self.command not in METHODS:
            return self.refuse(HTTPStatus.METHOD_NOT_ALLOWED, f"{self.command[:20]} is not served: "
                               f"use {', '.join(METHODS)}", [("Allow", ", ".join(METHODS))])
        if not self._addressed_here() or not self._token_given():
            return
        getattr(self, "do_GET" if self.command == "HEAD" else f"do_{self.command}")()

    def _addressed_here(self):
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or hosts[0].lower() not in self.server.hosts():
            self.refuse(HTTPStatus.FORBIDDEN, "this preview answers only on its loopback address")
            return False
        origin = self.headers.get_all("Origin") or []
        foreign = len(origin) != 1 or origin[0].lower() not in self.server.origins()
        if self.command == "POST" and origin and foreign:
            self.refuse(HTTPStatus.FORBIDDEN, "commands are taken only from this preview's own page")
            return False
        return True

    def _token_given(self):
        """True when the request may go on: it is for one of the server's open paths, or
        it carries the server's token (header or query); refused with 403 otherwise."""
        url = urllib.parse.urlsplit(self.path)
        if url.path in self.server.open_paths:
            return True
        presented = (self.headers.get_all(TOKEN_HEADER) or []) + \
            urllib.parse.parse_qs(url.query, keep_blank_values=True).get(TOKEN_PARAM, [])
        if token_matches(presented, self.server.token):
            return True
        self.refuse(HTTPStatus.FORBIDDEN, NO_TOKEN)
        return False

    def read_body(self, limit):
        """The request's body (at most ``limit`` bytes, given by one Content-Length),
        read within the request's deadline; None after answering why not."""
        if self.headers.get("Transfer-Encoding") is not None:
            self.refuse(HTTPStatus.BAD_REQUEST, "send the body with a Content-Length, not chunked")
            return None
        lengths = set(self.headers.get_all("Content-Length") or ["0"])
        text = lengths.pop().strip() if len(lengths) == 1 else ""
        if not text.isdigit() or len(text) > 9:
            self.refuse(HTTPStatus.BAD_REQUEST, "give one Content-Length, a number of bytes")
            return None
        n = int(text)
        if n > limit:
            self.refuse(HTTPStatus.BAD_REQUEST, f"a command is at most {limit} bytes")
            return None
        self.reader.budget = max(self.reader.budget, 0) + n
        data = self.rfile.read(n)
        self.connection.settimeout(WRITE_S)
        if len(data) < n:
            self.refuse(HTTPStatus.BAD_REQUEST, f"the body ended after {len(data)} of its {n} bytes")
            return None
        return data

    # ------------------------------------------------------------------ responses
    def send_response(self, code, message=None):
        self.responded = True
        super().send_response(code, message)

    def end_headers(self):
        for name, value in SECURITY_HEADERS:
            self.send_header(name, value)
        super().end_headers()

    def send(self, status, body, content_type, headers=()):
        """A complete response: ``body`` (bytes; none for HEAD) of ``content_type``."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, value, status=HTTPStatus.OK, headers=()):
        self.send(status, json_line(value), "application/json", headers)

    def refuse(self, status, line, headers=()):
        """An error: ``status`` and ``{"error": line}`` on one line."""
        self.close_connection = True
        self.send_json({"error": one_line(line)}, status, headers)

    def send_error(self, code, message=None, explain=None):
        """http.server's own errors (bad syntax, long header lines...) as one JSON line."""
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self.refuse(status, message or status.phrase)
