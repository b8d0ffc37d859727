"""Which kernels are stale, and why: what the compile notice says before compiling.

A kernel is *stale* when no compiled version of it is cached under its current
dependency key (:mod:`.keys`). Functions that Numba inlines into their callers
(``inline="always"``) are never compiled on their own: an edit of one makes its callers
stale. After every compile, :func:`record` keeps, beside the kernel's cache index, the
code digest of every function the kernel is made of (one record per cached version);
:func:`explain` compares the code as it is now with the closest recorded version, and
names what was edited (``kernels/bsdf.py: ggx_d``) apart from what merely uses it. A
kernel with no record was never compiled here (first run).
"""
import contextlib
import json
from typing import NamedTuple

from . import cache, folders, keys


class Plan(NamedTuple):
    """What a render will compile: ``stale`` kernels (dispatchers, callees first), the
    ``edited`` functions behind them (``"kernels/bsdf.py: ggx_d"``), and whether this is
    the first compile of some of them here (``first``)."""
    stale: list
    edited: list
    first: bool

    def describe(self):
        """One line: how many kernels compile and why (empty when nothing does)."""
        if not self.stale:
            return ""
        n = len(self.stale)
        what = f"{n} kernel{'s' * (n != 1)}"
        if self.edited:
            shown = ", ".join(self.edited[:4]) + (f" and {len(self.edited) - 4} more" if len(self.edited) > 4 else "")
            return f"compiling {what} after edits to {shown}"
        if self.first:
            return f"compiling {what}, first run here (cached afterwards)"
        return f"compiling {what} (not in the cache)"


def name(dispatcher):
    """``kernels/bsdf.py: ggx_d``: a function's file within the package, and its name."""
    py_func = dispatcher.py_func if hasattr(dispatcher, "py_func") else dispatcher
    parts = py_func.__module__.split(".")[1:]
    return f"{'/'.join(parts)}.py: {py_func.__qualname__}"


def closure(roots):
    """Every jitted function the ``roots`` are made of (roots included), callees first."""
    order, seen = [], set()

    def visit(d):
        if id(d) in seen:
            return
        seen.add(id(d))
        for callee in keys.callees(d.py_func):
            visit(callee)
        order.append(d)
    for root in roots:
        visit(root)
    return order


def compiled_alone(dispatcher):
    """Whether Numba compiles (and caches) the function on its own: not inlined into
    its callers by Numba, and cached by dependency key."""
    return (dispatcher.targetoptions.get("inline", "never") != "always"
            and cache.dispatcher_cache(dispatcher) is not None)


def compiled(dispatcher):
    """Whether the function is cached under its current key (by any process)."""
    return cache.dispatcher_cache(dispatcher).has_key()


def stale(roots):
    """The functions of the ``roots``' closure that are compiled alone and not cached
    under their current key, callees first; not a row kernel whose late twin is cached
    (``raytrace.jit.late.choose`` renders with the twin instead)."""
    from . import late
    return [d for d in closure(roots) if compiled_alone(d) and not cache.dispatcher_cache(d).has_key()
            and not late.twin_stands_in(d)]


def _digests(py_func):
    """{name: code digest} of ``py_func`` and every jitted function it is made of."""
    data = {name(py_func): keys.code_digest(py_func)}
    for d in closure(keys.callees(py_func)):
        data[name(d)] = keys.code_digest(d.py_func)
    return data


def record(py_func, the_cache):
    """After ``py_func`` was compiled into ``the_cache`` (a ``KernelCache``): keep the
    code digests of what it is made of in a file of its own beside the kernel, named
    after its current key (written whole; pruned with the kernel's other files)."""
    path = the_cache.record_path()
    if path is None or path.exists():
        return
    with contextlib.suppress(OSError):
        folders.write_whole(path, json.dumps(_digests(py_func)).encode())


def _recorded(dispatcher):
    """The code digests of each recorded compiled version of ``dispatcher`` (a list)."""
    out = []
    for path in cache.dispatcher_cache(dispatcher).records():
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            out.append(data)
    return out


def _changes(before, now):
    return [name for name, digest in now.items() if before.get(name) not in (None, digest)]


def explain(roots):
    """The :class:`Plan` for compiling ``roots`` now."""
    todo = stale(roots)
    edited, first = [], False
    for d in todo:
        versions = _recorded(d)
        if not versions:
            first = True
            continue
        now = _digests(d.py_func)
        # the compiled version closest to the code now (the one before the edit, or an
        # older one that an undo returns to): what differs from it was edited
        closest = min(versions, key=lambda before: len(_changes(before, now)))
        for label in _changes(closest, now):
            if label not in edited:
                edited.append(label)
    return Plan(todo, edited, first)
