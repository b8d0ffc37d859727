"""A minimal Chrome DevTools Protocol client for tests (standard library only).

Drives headless Chromium through ``--remote-debugging-pipe``: Chromium reads
NUL-terminated JSON commands from its file descriptor 3 and writes NUL-terminated
JSON replies and events to its file descriptor 4. Every read has a deadline, so a
hung browser raises ``TimeoutError`` instead of hanging the test.

    with Browser(width=800, height=600) as b:
        b.open("http://127.0.0.1:8000/page.html")
        b.wait_for("window.ready")
        png = b.screenshot()

Coordinates are CSS pixels in the page's viewport (the device scale factor is 1,
so they are also screenshot pixels); times are seconds.
"""
import base64
import collections
import fcntl
import json
import os
import select
import shutil
import signal
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--no-default-browser-check", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--mute-audio",
         "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
         "--disable-backgrounding-occluded-windows", "--remote-debugging-pipe"]


def find_chromium():
    """Path of chromium, chromium-browser or google-chrome on the PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class CDPError(RuntimeError):
    """A protocol command failed, or a page script threw."""


class Browser:
    """Headless Chromium with one page, driven over the DevTools pipe.

    ``width``, ``height``: viewport size in CSS pixels (= screenshot pixels).
    ``timeout``: default deadline of one protocol command, in seconds.
    ``chromium``: the browser binary (default: ``find_chromium()``).
    """

    def __init__(self, width=800, height=600, timeout=60.0, chromium=None, extra_flags=()):
        self.width, self.height, self.timeout = int(width), int(height), float(timeout)
        self.pid = None
        self.session_id = self.target_id = None
        self._next_id = 0
        self._buffer = b""
        self._events = collections.deque(maxlen=10000)
        self._fd_write = self._fd_read = None
        chromium = chromium or find_chromium()
        if chromium is None:
            raise FileNotFoundError("no Chromium found (Debian: apt-get install chromium)")
        self._tmp = tempfile.mkdtemp(prefix="cdp-")
        self.log_path = os.path.join(self._tmp, "chromium.log")
        try:
            self._launch(chromium, list(extra_flags))
            self.send("Browser.getVersion")          # the pipe works
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ process
    def _launch(self, chromium, extra):
        argv = [chromium, *FLAGS, f"--user-data-dir={os.path.join(self._tmp, 'profile')}",
                f"--window-size={self.width},{self.height}", *extra, "about:blank"]
        cmd_r, cmd_w = os.pipe()        # we write commands, Chromium reads them on its fd 3
        out_r, out_w = os.pipe()        # Chromium writes on its fd 4, we read
        # copies above 4, so that dup2 onto 3 and 4 cannot clobber one of them
        hi_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
        hi_w = fcntl.fcntl(out_w, fcntl.F_DUPFD_CLOEXEC, 10)
        log = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        try:
            # posix_spawn maps the fds without running Python in the child (safe with
            # threads, unlike a preexec_fn); setsid makes Chromium lead its own process
            # group, so that close() can end its helper processes with it.
            self.pid = os.posix_spawn(chromium, argv, dict(os.environ), setsid=True, file_actions=[
                (os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, log, 1),
                (os.POSIX_SPAWN_DUP2, log, 2), (os.POSIX_SPAWN_DUP2, hi_r, 3),
                (os.POSIX_SPAWN_DUP2, hi_w, 4)])
        finally:
            for fd in (cmd_r, out_w, hi_r, hi_w, log, null):
                os.close(fd)
        self._fd_write, self._fd_read = cmd_w, out_r

    def _log_tail(self, n=2000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def _reap(self, deadline_s):
        """Wait up to ``deadline_s`` seconds for Chromium to exit; True when it has."""
        end = time.monotonic() + deadline_s
        while True:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid:
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.05)

    def close(self):
        """Shut Chromium down (Browser.close, then SIGKILL after 10 s) and delete its profile."""
        if self.pid is not None:
            if self._fd_write is not None:
                try:
                    self._write({"id": self._new_id(), "method": "Browser.close"})
                except OSError:
                    pass
            if not self._reap(10.0):
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self._reap(10.0)
            try:                                     # helpers left in its process group
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.pid = None
        for attr in ("_fd_write", "_fd_read"):
            fd = getattr(self, attr)
            if fd is not None:
                os.close(fd)
                setattr(self, attr, None)
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------ protocol
    def _new_id(self):
        self._next_id += 1
        return self._next_id

    def _write(self, message):
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._fd_write, data):]

    def _read_message(self, deadline):
        """The next message from Chromium, waiting until ``deadline`` (time.monotonic())."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._fd_read], [], [], left)[0]:
                raise TimeoutError("no reply from Chromium in time")
            chunk = os.read(self._fd_read, 1 << 20)
            if not chunk:
                raise CDPError("Chromium closed the DevTools pipe (it exited?); log:\n"
                               + self._log_tail())
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method, params=None, session=True, timeout=None):
        """Run one protocol command and return its result (a dict).

        ``session``: True for the page session (once ``open`` has made one), False for the
        browser target. ``timeout``: seconds (default ``self.timeout``). Events that arrive
        meanwhile are queued for ``wait_event``.
        """
        message = {"id": self._new_id(), "method": method, "params": params or {}}
        if session and self.session_id:
            message["sessionId"] = self.session_id
        self._write(message)
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                reply = self._read_message(deadline)
            except TimeoutError:
                raise TimeoutError(f"{method}: no reply from Chromium within "
                                   f"{self.timeout if timeout is None else timeout} s") from None
            if reply.get("id") == message["id"]:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)
            # a reply to an earlier command that timed out: dropped

    def wait_event(self, method, predicate=None, timeout=None):
        """Wait for (and consume) an event of the page session named ``method`` whose params
        satisfy ``predicate``; returns its params. ``timeout``: seconds."""
        def match(ev):
            return (ev.get("method") == method and ev.get("sessionId") == self.session_id
                    and (predicate is None or predicate(ev.get("params", {}))))
        for ev in list(self._events):
            if match(ev):
                self._events.remove(ev)
                return ev.get("params", {})
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            try:
                ev = self._read_message(deadline)
            except TimeoutError:
                raise TimeoutError(f"no {method} event within {timeout} s") from None
            if match(ev):
                return ev.get("params", {})
            if "method" in ev:
                self._events.append(ev)

    # ------------------------------------------------------------------ page
    def open(self, url, timeout=None):
        """Open ``url`` in a new page (the page all other calls act on) and wait for its
        load event (``timeout`` seconds, default ``self.timeout``)."""
        if self.session_id:                          # one page at a time
            self.send("Target.closeTarget", {"targetId": self.target_id}, session=False)
            self.session_id = None
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session_id = self.send("Target.attachToTarget",
                                    {"targetId": target["targetId"], "flatten": True},
                                    session=False)["sessionId"]
        self.target_id = target["targetId"]
        self.send("Page.enable")
        self.send("Page.setLifecycleEventsEnabled", {"enabled": True})
        self.send("Emulation.setDeviceMetricsOverride", {
            "width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})
        nav = self.send("Page.navigate", {"url": url}, timeout=timeout)
        if nav.get("errorText"):
            raise CDPError(f"navigating to {url}: {nav['errorText']}")
        loader = nav.get("loaderId")
        self.wait_event("Page.lifecycleEvent", timeout=timeout,
                        predicate=lambda p: p.get("name") == "load"
                        and (loader is None or p.get("loaderId") == loader))

    def evaluate(self, expression, timeout=None):
        """Value of the JavaScript ``expression`` in the page (promises awaited; the value
        must be JSON-serialisable). Raises CDPError when the script throws."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CDPError(f"{expression!r} threw: {text}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression, deadline_s=30.0, poll_s=0.05):
        """Evaluate ``expression`` every ``poll_s`` seconds until it is truthy and return its
        value; TimeoutError (naming the expression) after ``deadline_s`` seconds."""
        end = time.monotonic() + deadline_s
        while True:
            left = end - time.monotonic()
            try:
                value = self.evaluate(expression, timeout=max(left, 0.0) + 5.0)
            except TimeoutError:
                value = None
            if value:
                return value
            if time.monotonic() >= end:
                raise TimeoutError(f"{expression!r} was not truthy within {deadline_s} s")
            time.sleep(min(poll_s, max(end - time.monotonic(), 0.0)))

    def screenshot(self):
        """PNG bytes of the viewport (``width`` x ``height`` pixels)."""
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        return base64.b64decode(data)

    def _mouse(self, kind, x, y, button="none", buttons=0, **extra):
        self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": button,
                                               "buttons": buttons, **extra})

    def click(self, x, y):
        """Left click at viewport point (x, y) in CSS pixels."""
        self._mouse("mouseMoved", x, y)
        self._mouse("mousePressed", x, y, "left", 1, clickCount=1)
        self._mouse("mouseReleased", x, y, "left", 0, clickCount=1)

    def drag(self, x0, y0, x1, y1, steps=10):
        """Drag with the left button from (x0, y0) to (x1, y1) (CSS pixels) in ``steps``
        mouse moves."""
        self._mouse("mouseMoved", x0, y0)
        self._mouse("mousePressed", x0, y0, "left", 1, clickCount=1)
        steps = max(int(steps), 1)
        for k in range(1, steps + 1):
            t = k / steps
            self._mouse("mouseMoved", x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, "left", 1)
        self._mouse("mouseReleased", x1, y1, "left", 0, clickCount=1)

    def wheel(self, x, y, delta_y):
        """Mouse wheel at (x, y) by ``delta_y`` CSS pixels (positive scrolls down)."""
        self._mouse("mouseWheel", x, y, deltaX=0, deltaY=delta_y)
