"""Ctrl-C as a terminal sends it, at a moment the program shows it has reached.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group (the program and
any worker it started). :func:`start` runs a command in a process group of its own, with
SIGINT's default handling and the signal unblocked whatever the test process inherited
(a pytest-xdist worker may ignore it), and with ``-X importtime``: the interpreter then
writes one line to stderr as each import finishes, which is the readiness marker
:func:`interrupt_after` waits for (with a deadline, never a fixed sleep).
"""
import os
import re
import signal
import subprocess
import sys
import threading
import time

_SHIM = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
         "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); "
         "os.execv(sys.argv[1], sys.argv[1:])")
IMPORT_LINE = re.compile(r"^import time:\s")


def start(args, cwd, env=None):
    """``python -X importtime ARGS...`` in its own process group; stderr is read by a thread
    into ``proc.lines`` (a list of lines) as it comes."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    proc = subprocess.Popen([sys.executable, "-c", _SHIM, sys.executable, "-X", "importtime", *args],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    proc.lines = []

    def read():
        for line in proc.stderr:
            proc.lines.append(line.rstrip("\n"))
    proc.reader = threading.Thread(target=read, daemon=True)
    proc.reader.start()
    return proc


def interrupt_after(proc, marker, deadline_s=300):
    """Wait until a stderr line matches the regular expression ``marker`` (or the program
    ends, or ``deadline_s`` passes), then Ctrl-C its process group. Returns whether the
    marker was seen."""
    pattern = re.compile(marker)
    end = time.monotonic() + deadline_s
    seen = False
    while time.monotonic() < end and proc.poll() is None:
        if any(pattern.search(line) for line in list(proc.lines)):
            seen = True
            break
        time.sleep(0.005)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    return seen


def finish(proc, timeout=300):
    """Wait for the program (killing it after ``timeout`` s) -> (exit status, its stderr
    lines other than the import-time ones)."""
    try:
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    proc.reader.join(timeout=30)
    proc.stdout.close()
    return proc.returncode, [line for line in proc.lines if not IMPORT_LINE.match(line)]
