"""``raytrace view`` under attack and abuse (issue 39): each row of the issue against the
real server, in a subprocess, through raw sockets where a client library would hide the
case (an unfinished request, HTTP/0.9, a HEAD that should have no body).

Rows 11-14 (watched files that are not regular or too large, Ctrl-C) are in
tests/test_view_hardening_files.py; row 15 (Ctrl-C while a command starts) in
tests/test_startup.py; the page's side of rows 1 and 3 in tests/test_view_browser.py."""
import json
import os
import pathlib
import re
import select
import socket
import subprocess
import sys
import time
import urllib.parse

import numpy as np
import pytest

from raytrace.view import commands, orbit, protocol, server
from view_helpers import DEADLINE, OWN, Viewer, done_after, probe_scene, write_scene

CSP = {"default-src": ["'none'"], "script-src": ["'self'"], "style-src": ["'self'"],
       "img-src": ["'self'", "blob:"], "connect-src": ["'self'"], "base-uri": ["'none'"],
       "form-action": ["'none'"], "frame-ancestors": ["'none'"]}


# ------------------------------------------------------------------ raw HTTP
def connect(port, timeout=60):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def read_all(sock, deadline_s=60):
    """Everything the server sends until it closes the connection."""
    end = time.monotonic() + deadline_s
    out = b""
    while True:
        left = end - time.monotonic()
        assert left > 0, f"the server did not close the connection; got {out[:200]!r}"
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            return out
        out += chunk


def parse(raw):
    """(status line, headers (lower-case names), body) of a whole response."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("iso-8859-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return lines[0], headers, body


def exchange(port, data, deadline_s=60):
    with connect(port) as sock:
        sock.sendall(data)
        return parse(read_all(sock, deadline_s))


def token_header(v, token=OWN):
    """The header line that carries ``token`` (default: viewer ``v``'s own; None: no line)."""
    token = v.token if token is OWN else token
    return "" if token is None else f"X-Raytrace-Token: {token}\r\n"


def get(v, path, method="GET", headers="", token=OWN):
    """A request to viewer ``v`` with its token in the header (``token``: another, or None)."""
    return exchange(v.port, f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{v.port}\r\n{token_header(v, token)}"
                            f"{headers}\r\n".encode())


def post(v, path, body, headers="", token=OWN):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return exchange(v.port, f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{v.port}\r\nContent-Type: application/json\r\n"
                            f"Content-Length: {len(data)}\r\n{token_header(v, token)}{headers}\r\n".encode() + data)


def status_of(line):
    return int(line.split()[1])


def assert_guarded(headers):
    """Row 1: framing and sniffing refused, and the page may load only what it needs."""
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    policy = {}
    for part in headers["content-security-policy"].split(";"):
        name, *values = part.split()
        policy[name] = values
    assert policy == CSP


def assert_one_json_line(status_line, headers, body, status):
    """An error answered as the issue asks: the status, JSON, one line with the error."""
    assert status_line.startswith("HTTP/1.0 ") and status_of(status_line) == status, status_line
    assert headers["content-type"] == "application/json" and int(headers["content-length"]) == len(body)
    assert body.endswith(b"\n") and body.count(b"\n") == 1, body
    error = json.loads(body)["error"]
    assert isinstance(error, str) and error and "<" not in error
    assert_guarded(headers)
    return error


def strict_json(data):
    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")
    return json.loads(data, parse_constant=refuse)


def thread_count(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def open_streams(v, n, deadline_s=DEADLINE):
    """``n`` event streams of viewer ``v``, each past its 200 head -> their sockets. A
    stream closed just before keeps its place until the server notices (within a
    second): a 503 until then is tried again."""
    end = time.monotonic() + deadline_s
    socks = []
    while len(socks) < n:
        sock = connect(v.port)
        sock.sendall(f"GET /events?token={v.token} HTTP/1.1\r\nHost: 127.0.0.1:{v.port}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            assert chunk, head
            head += chunk
        status = status_of(parse(head)[0])
        if status == 200:
            socks.append(sock)
            continue
        sock.close()
        assert status == 503 and time.monotonic() < end, f"stream refused: {head!r}"
        time.sleep(0.05)
    return socks


def wait_until(predicate, deadline_s, what):
    end = time.monotonic() + deadline_s
    while not predicate():
        assert time.monotonic() < end, what
        time.sleep(0.05)


# ------------------------------------------------------------------ viewers
@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One viewer for the checks that leave its state as they found it."""
    folder = tmp_path_factory.mktemp("shared")
    path = folder / "probe.json"
    write_scene(path, probe_scene())
    v = Viewer(path, "--save-dir", folder)
    v.wait(done_after())
    yield v
    v.kill()


def _probe(tmp_path, viewers, *args):
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene())
    v = viewers(path, *args)
    return v, v.wait(done_after())


# ------------------------------------------------------------------ row 1
def test_every_response_refuses_framing_and_sniffing(shared):
    """Row 1: the headers on every kind of response, errors and the event stream included."""
    port, v = shared.port, shared
    for path in ("/", "/index.html", "/app.js", "/style.css", "/state", "/frame.png", "/frame.pfm",
                 "/pixel?x=1&y=1", "/camera.json", "/nothing", "/pixel?x=a&y=1"):
        line, headers, _ = get(v, path)
        assert status_of(line) in (200, 400, 404), (path, line)
        assert_guarded(headers)
    assert_guarded(get(v, "/state", headers="Host: example.com\r\n")[1])                # 403
    assert_guarded(get(v, "/state", token=None)[1])                                     # 403: no token
    assert_guarded(get(v, "/", method="DELETE")[1])                                     # 405
    assert_guarded(exchange(port, b"GET /\r\n\r\n")[1])                                 # 505
    with shared.events() as stream:
        stream.next(60)
    with connect(port) as sock:                    # the stream's own head
        sock.sendall(f"GET /events?token={v.token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(4096)
    line, headers, _ = parse(head)
    assert status_of(line) == 200 and headers["content-type"] == "text/event-stream"
    assert_guarded(headers)


def test_the_page_needs_nothing_the_policy_refuses(shared):
    """Row 1: the CSP allows no inline script or style, so the page has none (that the
    page works under the policy is tests/test_view_browser.py's)."""
    page = get(shared, "/", token=None)[2].decode()
    assert re.findall(r"<script[^>]*>", page) == ['<script src="app.js">']
    assert re.findall(r"<link[^>]*>", page) == ['<link rel="stylesheet" href="style.css">']
    assert "<style" not in page and " style=" not in page and not re.search(r"\son\w+=", page)


# ------------------------------------------------------------------ row 2
def test_a_command_from_another_origin_is_refused(shared):
    port, v = shared.port, shared
    before = shared.state()
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{port + 1}", f"https://127.0.0.1:{port}",
                   f"http://127.0.0.1.evil.example:{port}"):
        reply = post(v, "/camera", {"orbit": [30, 0]}, f"Origin: {origin}\r\n")
        error = assert_one_json_line(*reply, 403)
        assert error == "commands are taken only from this preview's own page"
    after = shared.state()
    assert after["camera_overridden"] is False and after["generation"] == before["generation"]
    # the page's own origins, and a client that sends none (curl), are served (with the token)
    for extra in (f"Origin: http://127.0.0.1:{port}\r\n", f"Origin: http://localhost:{port}\r\n", ""):
        line, _, body = post(v, "/mode", {"mode": "color"}, extra)
        assert status_of(line) == 200, body


# ------------------------------------------------------------------ row 3
def test_camera_numbers_are_bounded_and_never_non_finite(tmp_path, viewers):
    v, first = _probe(tmp_path, viewers)
    refused = [(b'{"dolly": 1e308}', "dolly: must be within 0.001 .. 1000, got 1e+308"),
               (b'{"dolly": 1e999}', "numbers must be finite, got 1e999"),
               (b'{"dolly": Infinity}', "numbers must be finite, got Infinity"),
               (b'{"dolly": NaN}', "numbers must be finite, got NaN"),
               (b'{"dolly": -Infinity}', "numbers must be finite, got -Infinity"),
               (b'{"dolly": 0}', "dolly: must be within 0.001 .. 1000, got 0"),
               (b'{"orbit": [1e308, 0]}', "orbit: must be within -360 .. 360, got 1e+308"),
               (b'{"orbit": [0, -400]}', "orbit: must be within -360 .. 360, got -400"),
               (b'{"set": {"center": [1e300, 0, 6], "look_at": [0, 0, 0]}}',
                "set.center[0]: must be within -1e+12 .. 1e+12, got 1e+300")]
    for body, message in refused:
        assert assert_one_json_line(*post(v, "/camera", body), 400) == message, body
    state = strict_json(get(v, "/state")[2])
    assert state["camera_overridden"] is False and state["generation"] == first["generation"]
    # the most a page can ask, again and again: the eye stops at the largest distance
    for _ in range(6):
        line, _, body = post(v, "/camera", {"dolly": commands.DOLLY[1]})
        assert status_of(line) == 200, body
    far = v.wait(lambda s: s["generation"] >= first["generation"] + 6 and done_after(first["generation"] + 5)(s))
    eye = np.array(strict_json(get(v, "/state")[2])["camera"]["center"])
    assert np.isfinite(eye).all() and np.linalg.norm(eye) == pytest.approx(orbit.MAX_DISTANCE, rel=1e-9)
    snippet = strict_json(get(v, "/camera.json")[2])["camera"]
    assert snippet["center"] == pytest.approx(list(eye), rel=1e-6)     # numbers, not null
    for _ in range(8):
        assert status_of(post(v, "/camera", {"dolly": commands.DOLLY[0]})[0]) == 200
    near = v.wait(lambda s: s["generation"] >= far["generation"] + 8 and done_after(far["generation"] + 7)(s))
    assert np.linalg.norm(near["camera"]["center"]) == pytest.approx(orbit.MIN_DISTANCE, rel=1e-6)


# ------------------------------------------------------------------ row 4
def test_deep_long_and_huge_json_is_refused(shared):
    v = shared
    too_deep = f"a command nests arrays and objects at most {commands.MAX_DEPTH} deep"
    cases = [(b"[" * 65000, too_deep),
             (b'{"a":' * 9 + b"1" + b"}" * 9, too_deep),
             (b'{"dolly": ' + b"9" * 5000 + b"}", "integers have at most 15 digits"),
             (b'{"mode": "' + b"[" * 60000 + b'"}', "mode: must be one of"),     # in a string: no depth
             (b" " * (commands.MAX_BODY + 1), f"a command is at most {commands.MAX_BODY} bytes"),
             (b"[1, 2]", "a command is a JSON object"),
             (b"{nope", "not JSON: ")]
    for body, message in cases:
        error = assert_one_json_line(*post(v, "/mode", body), 400)
        assert error.startswith(message), (body[:20], error)
    assert commands.depth(b'{"a": [[1, "[[[["], {"b": []}]}') == 4


# ------------------------------------------------------------------ row 5
def test_exposure_has_one_range_everywhere(tmp_path, viewers):
    out = tmp_path / "saved"
    out.mkdir()
    v, _ = _probe(tmp_path, viewers, "--save-dir", out)
    lo, hi = commands.EXPOSURE
    for value in (2000, 200, hi + 0.5, lo - 0.5):
        error = assert_one_json_line(*post(v, "/save", {"format": "png", "exposure": value}), 400)
        assert error == f"exposure: must be within {lo:g} .. {hi:g}, got {value:g}"
        error = assert_one_json_line(*get(v, f"/frame.png?exposure={value}"), 400)
        assert error == f"exposure must be within {lo:g} .. {hi:g} stops"
    for value in ("nan", "inf", "1e999", "1" * 50):
        assert status_of(get(v, f"/frame.png?exposure={value}")[0]) == 400
    assert list(out.iterdir()) == []                                   # nothing was written
    for value in (lo, hi):
        assert status_of(get(v, f"/frame.png?exposure={value}")[0]) == 200
        line, _, body = post(v, "/save", {"format": "png", "exposure": value})
        assert status_of(line) == 200, body
    assert sorted(p.name for p in out.iterdir()) == ["probe-view-001.png", "probe-view-002.png"]


# ------------------------------------------------------------------ row 6
_OTHER = r"""
import os, sys, time
folder, count = sys.argv[1], int(sys.argv[2])
made, k = [], 1
print("ready", flush=True)
sys.stdin.readline()
while len(made) < count:
    name = os.path.join(folder, f"probe-view-{k:03d}.png")
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        k += 1
        continue
    os.write(fd, f"other {k}".encode())
    os.close(fd)
    made.append(k)
    k += 1
    time.sleep(0.003)          # leave the viewer room to race for the next names
print(" ".join(map(str, made)), flush=True)
"""


def test_saves_never_replace_a_file_or_follow_a_symlink(tmp_path, viewers):
    out = tmp_path / "saved"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("victim")
    os.symlink(tmp_path / "nowhere.png", out / "probe-view-001.png")      # dangling
    os.symlink(victim, out / "probe-view-002.png")                        # to a file elsewhere
    v, _ = _probe(tmp_path, viewers, "--save-dir", out)
    other = subprocess.Popen([sys.executable, "-c", _OTHER, str(out), "40"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert other.stdout.readline().strip() == "ready"
    other.stdin.write("go\n")
    other.stdin.flush()
    saved = []
    for _ in range(40):
        line, _, body = post(v, "/save", {"format": "png"})
        assert status_of(line) == 200, body
        saved.append(json.loads(body)["path"])
    made = [int(k) for k in other.communicate(timeout=120)[0].split()]
    assert len(made) == 40 and len(set(saved)) == 40
    for k in made:                                                        # none of its files replaced
        assert (out / f"probe-view-{k:03d}.png").read_bytes() == f"other {k}".encode()
    for path in saved:
        assert not os.path.islink(path) and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert not {os.path.basename(p) for p in saved} & {f"probe-view-{k:03d}.png" for k in made}
    assert os.readlink(out / "probe-view-001.png") == str(tmp_path / "nowhere.png")
    assert not (tmp_path / "nowhere.png").exists() and victim.read_text() == "victim"
    assert os.readlink(out / "probe-view-002.png") == str(victim)
    assert len(list(out.iterdir())) == 82                                 # no temporary left behind


# ------------------------------------------------------------------ row 7
def test_an_unfinished_request_times_out_with_one_line(shared):
    port = shared.port
    token = token_header(shared)
    for partial in (f"POST /camera HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                    f"{token}Content-Length: 65536\r\n\r\n{{".encode(),
                    f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode(),      # no blank line
                    b"GET /sta"):
        error = assert_one_json_line(*exchange(port, partial, deadline_s=DEADLINE), 408)
        assert error == f"the request did not arrive within {protocol.REQUEST_S:g} s"
    with connect(port) as sock:                # a connection that says nothing: closed, silently
        assert read_all(sock, DEADLINE) == b""


def test_a_spare_connection_is_served_after_a_pause(shared):
    """A browser opens connections ahead of its requests and keeps an unused one up to 10
    s: one used after more than REQUEST_S of silence is still served (the request's
    deadline runs from its first byte; silence alone is allowed IDLE_S)."""
    assert protocol.IDLE_S > 10 > protocol.REQUEST_S
    with connect(shared.port) as sock:
        time.sleep(protocol.REQUEST_S + 1)          # the client's own pause, not a wait for the server
        sock.sendall(f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{shared.port}\r\n{token_header(shared)}\r\n".encode())
        line, _, body = parse(read_all(sock))
    assert status_of(line) == 200 and json.loads(body)["scene"].endswith("probe.json")


def test_a_client_that_trickles_is_cut_off(shared):
    """A byte a second keeps no single read waiting long, but the request as a whole has a
    deadline: the server answers 408 long before this request line would end."""
    answer = b""
    with connect(shared.port) as sock:
        for byte in b"GET /" + b"a" * 60:
            try:
                sock.sendall(bytes([byte]))
                sock.settimeout(1.0)               # the pace: one byte a second
                answer = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                pass
            break
        try:
            answer += read_all(sock)
        except ConnectionResetError:
            pass
    assert assert_one_json_line(*parse(answer), 408).startswith("the request did not arrive")


def _half(port):
    sock = connect(port)
    sock.sendall(b"GET / HTTP/1.1\r\n")
    return sock


def _fill(v):
    """Open MAX_CONNECTIONS connections to viewer ``v`` that each send half a request,
    then one whole request -> (the held sockets, how many of them were refused at once,
    the whole request's status). The server accepts connections one after the other, so
    an early one that it refused has its 503 by the time the last one is answered."""
    held = [_half(v.port) for _ in range(protocol.MAX_CONNECTIONS)]
    status = status_of(get(v, "/state")[0])
    refused = sum(bool(select.select([sock], [], [], 0)[0]) for sock in held)
    return held, refused, status


def _take_every_place(v, deadline_s):
    """:func:`_fill` until the server takes all MAX_CONNECTIONS (a connection that has
    just closed may hold its place for a moment) -> (held sockets, the next one's status)."""
    end = time.monotonic() + deadline_s
    while True:
        held, refused, status = _fill(v)
        if refused == 0:
            return held, status
        for sock in held:
            sock.close()
        assert time.monotonic() < end, f"{refused} places still taken"
        time.sleep(0.05)


def test_connections_are_capped_and_the_excess_refused_at_once(tmp_path, viewers):
    """300 connections that each send half a request: the first MAX_CONNECTIONS get a
    thread (and 408 at their deadline), every other one 503 at once; then the page."""
    v, _ = _probe(tmp_path, viewers)
    base = thread_count(v.proc.pid)
    held, status = _take_every_place(v, DEADLINE)
    extra = []
    try:
        assert status == 503                                          # all taken: the next is refused
        extra = [_half(v.port) for _ in range(300 - protocol.MAX_CONNECTIONS - 1)]
        for sock in extra:
            error = assert_one_json_line(*parse(read_all(sock)), 503)
            assert error == f"more than {protocol.MAX_CONNECTIONS} connections are open: try again"
        assert thread_count(v.proc.pid) <= base + protocol.MAX_CONNECTIONS
        for sock in held:
            assert_one_json_line(*parse(read_all(sock, DEADLINE)), 408)
    finally:
        for sock in held + extra:
            sock.close()
    assert status_of(get(v, "/")[0]) == 200                       # and the page again


def test_event_streams_are_capped_and_the_page_still_served(shared):
    v = shared
    streams = open_streams(v, server.MAX_STREAMS)
    try:
        error = assert_one_json_line(*get(v, "/events"), 503)
        assert error == f"{server.MAX_STREAMS} pages already follow this preview: close one"
        assert status_of(get(v, "/")[0]) == 200 and status_of(get(v, "/state")[0]) == 200
        streams.pop().close()                   # a page goes away: its place is free again
        end = time.monotonic() + server.KEEPALIVE_S
        while status_of(get(v, "/events", method="HEAD")[0]) != 200:
            assert time.monotonic() < end, "the closed stream's place was not freed"
            time.sleep(0.05)
    finally:
        for sock in streams:
            sock.close()


def test_threads_are_freed_soon_after_clients_vanish(tmp_path, viewers):
    """Event streams whose page went away and requests cut off half-way give their
    connection's place (and thread) back without waiting for a keep-alive to fail or a
    deadline to pass: all MAX_CONNECTIONS places are free again before the first
    keep-alive would be written."""
    v, _ = _probe(tmp_path, viewers)
    base = thread_count(v.proc.pid)
    streams = open_streams(v, server.MAX_STREAMS)
    halves = []
    for _ in range(protocol.MAX_CONNECTIONS - server.MAX_STREAMS):
        sock = connect(v.port)
        sock.sendall(f"POST /camera HTTP/1.1\r\nHost: 127.0.0.1:{v.port}\r\nContent-Type: application/json\r\n"
                     f"{token_header(v)}Content-Length: 100\r\n\r\n{{".encode())
        halves.append(sock)
    assert status_of(get(v, "/state")[0]) == 503                  # every place is taken
    for sock in streams + halves:
        sock.close()
    held, status = _take_every_place(v, server.KEEPALIVE_S)
    for sock in held:
        sock.close()
    assert status == 503 and thread_count(v.proc.pid) <= base + protocol.MAX_CONNECTIONS


# ------------------------------------------------------------------ row 8
def test_head_has_no_body(shared):
    v = shared
    line, headers, body = get(v, "/events", method="HEAD")
    assert status_of(line) == 200 and headers["content-type"] == "text/event-stream" and body == b""
    for path in ("/", "/state", "/frame.png", "/camera.json"):
        got = get(v, path)
        line, headers, body = get(v, path, method="HEAD")
        assert status_of(line) == 200 and body == b"", path
        assert headers["content-type"] == got[1]["content-type"]
        if path != "/state":                   # the state's version may move between the two
            assert int(headers["content-length"]) == len(got[2]), path
    line, headers, body = get(v, "/nothing", method="HEAD")
    assert status_of(line) == 404 and body == b"" and int(headers["content-length"]) > 0


# ------------------------------------------------------------------ row 9
@pytest.mark.parametrize("request_bytes, status, message", [
    (b"GARBAGE\r\n\r\n", 400, "bad request line: 'GARBAGE'"),
    (b"GET / HTTP/1.x\r\n\r\n", 400, "bad request line: 'GET / HTTP/1.x'"),
    (b"GET /\r\n\r\n", 505, "HTTP/0.9 is not served: use HTTP/1.1 or HTTP/1.0"),
    (b"GET /\r\n", 505, "HTTP/0.9 is not served: use HTTP/1.1 or HTTP/1.0"),
    (b"GET / HTTP/2.0\r\n\r\n", 505, "HTTP/2.0 is not served: use HTTP/1.1 or HTTP/1.0"),
    (b"GET /" + b"a" * protocol.MAX_LINE + b" HTTP/1.1\r\n\r\n", 414,
     f"the request line is more than {protocol.MAX_LINE} bytes"),
    (b"GET / HTTP/1.1\r\nX: " + b"a" * protocol.MAX_HEAD + b"\r\n\r\n", 431,
     f"the request's line and headers are more than {protocol.MAX_HEAD} bytes"),
    (b"GET / HTTP/1.1\r\n" + b"".join(b"X%d: 1\r\n" % i for i in range(120)) + b"\r\n", 431, "Too many headers"),
    (b"POST /mode HTTP/1.1\r\nHOST\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
     "send the body with a Content-Length, not chunked"),
    (b"POST /mode HTTP/1.1\r\nHOST\r\nContent-Type: application/json\r\nContent-Length: 1\r\n"
     b"Content-Length: 2\r\n\r\n{}", 400, "give one Content-Length, a number of bytes"),
    (b"POST /mode HTTP/1.1\r\nHOST\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n", 400,
     "give one Content-Length, a number of bytes"),
] + [(f"{m} / HTTP/1.1\r\nHOST\r\n\r\n".encode(), 405, f"{m} is not served: use GET, HEAD, POST")
     for m in ("PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "BREW")])
def test_protocol_errors_are_one_json_line(shared, request_bytes, status, message):
    data = request_bytes.replace(b"HOST", f"Host: 127.0.0.1:{shared.port}\r\n{token_header(shared)}".rstrip().encode())
    line, headers, body = exchange(shared.port, data)
    assert assert_one_json_line(line, headers, body, status) == message
    if status == 405:
        assert headers["allow"] == "GET, HEAD, POST"
        assert not any(name.startswith("access-control-") for name in headers)   # no preflight answered


# ------------------------------------------------------------------ row 10
def _port_80_free():
    if os.geteuid() != 0:
        return False
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)       # as the server does
    try:
        s.bind(("127.0.0.1", 80))
        return True
    except OSError:
        return False
    finally:
        s.close()


@pytest.mark.skipif(not _port_80_free(), reason="port 80 needs root and must be free")
def test_port_80_answers_hosts_without_the_port(tmp_path, viewers):
    v, _ = _probe(tmp_path, viewers, "--port", "80")
    assert v.port == 80
    for host in ("127.0.0.1", "localhost", "127.0.0.1:80", "LOCALHOST:80"):
        line, _, body = exchange(80, f"GET /state HTTP/1.1\r\nHost: {host}\r\n{token_header(v)}\r\n".encode())
        assert status_of(line) == 200, (host, body)
    for host in ("127.0.0.1:81", "example.com", "127.0.0.2"):
        request = f"GET /state HTTP/1.1\r\nHost: {host}\r\n{token_header(v)}\r\n".encode()
        assert status_of(exchange(80, request)[0]) == 403
    body = b'{"mode": "normals"}'
    head = (b"POST /mode HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://127.0.0.1\r\n"
            b"Content-Type: application/json\r\n%sContent-Length: %d\r\n\r\n" % (token_header(v).encode(), len(body)))
    line, _, reply = exchange(80, head + body)
    assert status_of(line) == 200, reply


# ------------------------------------------------------------------ issue 43: only the owner drives it
OPEN = ("/", "/index.html", "/app.js", "/style.css")                   # the page: no secret in it
GUARDED = ("/state", "/events", "/frame.png", "/frame.pfm", "/pixel?x=1&y=1", "/camera.json")
COMMANDS = (("/mode", {"mode": "normals"}), ("/camera", {"orbit": [30, 0]}), ("/save", {"format": "png"}),
            ("/time", {"t": 0}))


def _not_the_token(token):
    """Tokens a client without the secret might send: none, empty, a guess, the secret
    with its last character changed, one character short or long, in another case, and
    text that is not ASCII."""
    last = "A" if token[-1] != "A" else "B"
    return {"no token": None, "empty": "", "a guess": "wrong", "last character": token[:-1] + last,
            "one short": token[:-1], "one long": token + "x", "swapped case": token.swapcase(),
            "not ascii": "\xe9" * len(token)}


def _in_query(path, token):
    """``path`` with ``token`` in its query (None: as it is)."""
    if token is None:
        return path
    return f"{path}{'&' if '?' in path else '?'}token={urllib.parse.quote(token)}"


def test_without_the_token_nothing_but_the_page_is_served(tmp_path, viewers):
    """Issue 43: a command, a save, a frame, the state and the event stream each need the
    session's token, in the header or the query: without it or with a wrong one, 403
    and one JSON line, and nothing happens (no file, no change, no stream). The control:
    the same requests with the right token do what they say (the mode changes, the file
    is written, the frame and the stream come), so the checks would see a drive."""
    out = tmp_path / "saved"
    out.mkdir()
    v, first = _probe(tmp_path, viewers, "--save-dir", out)
    for name, token in _not_the_token(v.token).items():
        for where in ("header", "query"):
            header, query = (token, None) if where == "header" else (None, token)
            for path, body in COMMANDS:
                reply = post(v, _in_query(path, query), body, token=header)
                assert assert_one_json_line(*reply, 403) == protocol.NO_TOKEN, (name, where, path)
            for path in GUARDED:
                line, headers, body = get(v, _in_query(path, query), token=header)
                assert assert_one_json_line(line, headers, body, 403) == protocol.NO_TOKEN, (name, where, path)
                line, headers, body = get(v, _in_query(path, query), method="HEAD", token=header)
                assert status_of(line) == 403 and body == b"", (name, where, path)
    # the right token beside a wrong one (the other place, or twice): still refused
    assert status_of(get(v, "/state?token=wrong")[0]) == 403
    assert status_of(get(v, f"/state?token={v.token}", token=v.token + "x")[0]) == 403
    assert status_of(get(v, f"/state?token={v.token}&token=wrong", token=None)[0]) == 403
    # nothing happened (the generation may move: the kernel cache files are watched too)
    assert list(out.iterdir()) == []
    state = v.state()
    assert (state["mode"], state["camera_overridden"], state["camera"]) == ("color", False, first["camera"])
    # the page itself needs no token (its script reads it from the page's address)
    for path in OPEN:
        assert status_of(get(v, path, token=None)[0]) == 200, path
        assert status_of(get(v, path + "?token=wrong", token=None)[0]) == 200, path

    # the control: the right token, in the header (fetch, commands) or the query (stream, images)
    line, _, body = post(v, "/mode", {"mode": "normals"})
    assert status_of(line) == 200, body
    normals = v.wait(lambda s: s["frame"] is not None and s["frame"]["mode"] == "normals"
                     and done_after(first["generation"])(s))
    line, _, body = post(v, _in_query("/save", v.token), {"format": "png"}, token=None)
    assert status_of(line) == 200 and json.loads(body)["path"] == str(out / "probe-view-001.png"), body
    assert (out / "probe-view-001.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    line, headers, png = get(v, _in_query("/frame.png?exposure=0", v.token), token=None)
    assert status_of(line) == 200 and png[:8] == b"\x89PNG\r\n\x1a\n"
    assert headers["x-frame"] == str(normals["frame"]["id"])
    line, headers, _ = get(v, "/frame.pfm")
    assert status_of(line) == 200 and headers["x-frame"] == str(normals["frame"]["id"])
    with v.events() as stream:                                       # the token in the query
        assert stream.next(60)["mode"] == "normals"


def test_the_token_is_checked_before_the_stream_cap(shared):
    """With every event-stream place taken by the page's own streams, one without the
    token is refused for its token (403), not for the cap: it never competes for a place.
    The control: the same request with the token gets the cap's 503."""
    streams = open_streams(shared, server.MAX_STREAMS)
    try:
        assert status_of(get(shared, "/events")[0]) == 503             # the control: the cap is reached
        error = assert_one_json_line(*get(shared, "/events", token=None), 403)
        assert error == protocol.NO_TOKEN
    finally:
        for sock in streams:
            sock.close()
    end = time.monotonic() + server.KEEPALIVE_S                         # places free again for later tests
    while status_of(get(shared, "/events", method="HEAD")[0]) != 200:
        assert time.monotonic() < end, "the closed streams' places were not freed"
        time.sleep(0.05)


def test_the_printed_address_carries_a_fresh_token(tmp_path, viewers):
    """The address is printed with a token of 32 random bytes (43 URL-safe characters),
    another for every run; the page's script reads it from there and sends it with every
    request: the header on fetch(), the query on the event stream."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    v, _ = _probe(tmp_path / "a", viewers)
    w, _ = _probe(tmp_path / "b", viewers)
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", v.token) and v.token != w.token
    printed = [line for line in v.errors() if "token=" in line]        # (an import's line may follow on it)
    assert len(printed) == 1 and printed[0].startswith(
        f"raytrace view: {v.url} ({tmp_path / 'a' / 'probe.json'}; Ctrl-C to stop)"), printed
    assert v.url == f"http://127.0.0.1:{v.port}/?token={v.token}"
    script = get(v, "/app.js", token=None)[2].decode()
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("//"))
    assert 'new URLSearchParams(location.search).get("token")' in code
    assert 'new EventSource(withToken("/events"))' in code and "EventSource(" not in code.replace(
        'EventSource(withToken("/events"))', "")
    fetches = re.findall(r"\bfetch\([^)]*", code)                 # get() and post(), both with the header
    assert len(fetches) == 2 and all("headers" in code[code.index(f):code.index(f) + 120] for f in fetches)


def test_the_browser_gets_a_private_file_not_the_token(tmp_path):
    """Where there is a screen the preview opens a browser: the browser's command line
    (readable by every user) names a file, not the address with the token; the file is
    the user's alone and sends the browser on to the printed address; Ctrl-C removes it.
    The control: the printed address does carry the token, so the check on the command
    line would see it there."""
    argv_file = tmp_path / "argv.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{argv_file}.tmp" && mv "{argv_file}.tmp" "{argv_file}"\n')
    browser.chmod(0o755)
    path = tmp_path / "probe.json"
    write_scene(path, probe_scene())
    v = Viewer(path, browser=True, env={"DISPLAY": ":99", "BROWSER": str(browser)})
    try:
        wait_until(argv_file.exists, DEADLINE, "the browser was not started")
        argv = argv_file.read_text().split()
        assert v.token in v.url                                       # the control
        assert len(argv) == 1 and argv[0].startswith("file:///") and v.token not in argv[0], argv
        page = pathlib.Path(urllib.parse.unquote(urllib.parse.urlsplit(argv[0]).path))
        assert oct(page.stat().st_mode & 0o777) == "0o600" and oct(page.parent.stat().st_mode & 0o777) == "0o700"
        assert f'http-equiv="refresh" content="0;url={v.url}"' in page.read_text()
        v.wait(done_after())                                          # loaded: Ctrl-C as in the other tests
        code, lines = v.interrupt()
        assert code == 130 and lines[-1] == "raytrace view: stopped", lines
        assert not page.parent.exists()
    finally:
        v.kill()


def test_tokens_are_compared_with_compare_digest(monkeypatch):
    """protocol.token_matches: every value given must be the token, each compared with
    hmac.compare_digest (its calls are counted: the control is a plain comparison, which
    the count catches); text that is not ASCII is refused, not an error."""
    token = protocol.new_token()
    calls = []
    real = protocol.hmac.compare_digest
    monkeypatch.setattr(protocol.hmac, "compare_digest", lambda a, b: calls.append(1) or real(a, b))
    assert protocol.token_matches([token], token) and calls == [1]
    for presented in ([""], ["\xe9" * 43], [token, "x"], ["x", token], [token + "x"], [token[:-1]]):
        before = len(calls)
        assert not protocol.token_matches(presented, token), presented
        assert len(calls) > before, presented
    assert not protocol.token_matches([], token)
    assert protocol.token_matches([token, token], token)
    before = len(calls)
    plain = lambda presented, expected: bool(presented) and all(p == expected for p in presented)  # noqa: E731
    assert plain([token], token) and len(calls) == before          # the control: caught by the count
