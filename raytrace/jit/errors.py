"""A kernel that does not compile, said in a few lines that name the user's code.

Numba's typing errors run to pages: every caller's frame, the candidate
implementations of an operator, "During: ..." lines. Someone who just edited a kernel
needs three facts: which line of their file, what expression there, and what is wrong
with it. :func:`kernel_error` turns a Numba error into a :class:`KernelError` (a
``UserError``: the command line prints it and exits with status 2) whose text is::

    kernel code does not compile: raytrace/kernels/bsdf.py, line 182, in bsdf_eval
        base = d * g1i / (4.0 * wiz) + (hx, hy, hz)
    cannot add float64 and UniTuple(float64 x 3)
    called from raytrace/kernels/path.py, line 191, in direct_light
    (Numba's full message: RAYTRACE_NUMBA_ERRORS=full)

The place is the innermost ``File "...", line N`` block of Numba's message; a name that
is not defined (Numba says which name, not where) is found in the source of the
innermost function being typed. ``RAYTRACE_NUMBA_ERRORS=full`` (or the commands'
``--numba-errors``) appends Numba's whole message instead of the hint.
"""
import linecache
import os
import re
import sys

from userio.errors import UserError

FULL_SWITCH = "RAYTRACE_NUMBA_ERRORS"

_FILE = re.compile(r'^File "(?P<file>[^"]+)", line (?P<line>\d+):\s*$')
_CALLEE = re.compile(r"resolving callee type: type\((?:CPUDispatcher|Dispatcher)\(<function (?P<name>[\w.<>]+) at")
_CALL_AT = re.compile(r"typing of (?:intrinsic-)?call at (?P<file>.+) \((?P<line>\d+)\)\s*$")
_NAME = re.compile(r"NameError: name '(?P<name>\w+)' is not defined")
_NO_IMPL = re.compile(r">>> (?P<op>\w+)\((?P<args>.*)\)\s*$")
_BIND = re.compile(r"Cannot bind 'args=\((?P<args>.*)\) kws=\{.*\}' to signature '(?P<sig>\(.*\))' "
                   r"due to \"TypeError: (?P<why>.*)\"")
_OPERATORS = {"add": "add", "iadd": "add", "sub": "subtract", "isub": "subtract", "mul": "multiply",
              "imul": "multiply", "truediv": "divide", "itruediv": "divide", "floordiv": "divide",
              "mod": "take the remainder of", "pow": "raise", "lt": "compare", "gt": "compare",
              "le": "compare", "ge": "compare", "eq": "compare", "ne": "compare"}


class KernelError(UserError):
    """A kernel that does not compile; ``str()`` is the short block (several lines)."""
    multiline = True          # userio.cli prints it as it is, not folded onto one line

    def __init__(self, text, full=None):
        self.full = full            # Numba's own message
        super().__init__(None, text)


def full_messages():
    """Whether Numba's full messages are asked for (``RAYTRACE_NUMBA_ERRORS=full``)."""
    return os.environ.get(FULL_SWITCH, "").strip().lower() in ("full", "1", "yes", "on", "true")


def is_compile_error(exc):
    """Whether ``exc`` is Numba failing to compile a kernel (typing, lowering, unsupported)."""
    if "numba.core.errors" not in sys.modules:      # nothing compiled: not one (and Numba stays unimported)
        return False
    return isinstance(exc, sys.modules["numba.core.errors"].NumbaError)


def kernel_error(exc, full=None):
    """The :class:`KernelError` for Numba's ``exc`` (see the module docstring)."""
    message = str(exc)
    full = full_messages() if full is None else full
    text = short_text(message)
    text += ("\n--- Numba's full message ---\n" + message.rstrip()) if full else \
        f"\n(Numba's full message: {FULL_SWITCH}=full)"
    return KernelError(text, full=message)


def short_text(message):
    """The short block (without the last hint line) for Numba's error ``message``."""
    lines = message.splitlines()
    places = _places(lines)
    what = _what(lines)
    name = _NAME.search(message)
    callee = _CALLEE.search(message)
    if name and callee and not _place_in(places, callee.group("name")):
        found = _find_name(lines, callee.group("name"), name.group("name"))
        if found:
            places.insert(0, found)
    if not places:
        return f"kernel code does not compile: {what}"
    file, line, func = places[0]
    linecache.checkcache(file)                # the file as it is now (an edit since the last read)
    code = linecache.getline(file, line).strip() if os.path.exists(file) else ""
    out = [f"kernel code does not compile: {_shown(file)}, line {line}" + (f", in {func}" if func else "")]
    if code:
        out.append(f"    {code}")
    out.append(what)
    for file, line, func in places[1:3]:
        out.append(f"called from {_shown(file)}, line {line}" + (f", in {func}" if func else ""))
    return "\n".join(out)


def _shown(path):
    """A path as the user knows it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _places(lines):
    """(absolute file, line, function) of each ``File "...", line N:`` block, innermost first."""
    out = []
    for i, text in enumerate(lines):
        m = _FILE.match(text.strip())
        if not m:
            continue
        func = None
        if i + 1 < len(lines):
            d = re.match(r"\s*def (\w+)\(", lines[i + 1])
            func = d.group(1) if d else None
        file = m.group("file")
        out.append((os.path.abspath(file), int(m.group("line")), func))
    return out


def _place_in(places, func):
    return any(f == func.rsplit(".", 1)[-1] for _, _, f in places[:1])


def _find_name(lines, func_name, name):
    """(file, line, function) of the first use of ``name`` in the function ``func_name``
    whose call Numba was typing (found through the call's file and that module's
    globals)."""
    for text in lines:
        m = _CALL_AT.search(text.strip())
        if not m:
            continue
        module = _module_for(m.group("file"))
        func = getattr(module, func_name.rsplit(".", 1)[-1], None) if module else None
        py_func = getattr(func, "py_func", None)
        if py_func is None:
            continue
        file, first = py_func.__code__.co_filename, py_func.__code__.co_firstlineno
        linecache.checkcache(file)
        source = linecache.getlines(file)
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        in_body = False
        for k in range(first - 1, len(source)):
            text = source[k]
            if text.lstrip().startswith(("def ", "async def ")):
                in_body = True
                continue
            if in_body and text.strip() and not text.startswith((" ", "\t", "#")):
                break                    # the next top-level statement: the function ended
            if in_body and pattern.search(text.split("#", 1)[0]):
                return file, k + 1, py_func.__name__
        return None
    return None


def _module_for(path):
    path = os.path.abspath(path)
    for module in list(sys.modules.values()):
        if os.path.abspath(getattr(module, "__file__", None) or "") == path:
            return module
    return None


def _what(lines):
    """What is wrong, in one line."""
    text = "\n".join(lines)
    m = _BIND.search(text)
    if m:
        callee = _CALLEE.search(text)
        name = callee.group("name").rsplit(".", 1)[-1] if callee else "the function"
        count = len([a for a in m.group("args").split(",") if a.strip()]) if m.group("args").strip() else 0
        return f"{name}{m.group('sig')} called with {count} argument{'s' * (count != 1)}: {m.group('why')}"
    m = _NAME.search(text)
    if m:
        return f"name '{m.group('name')}' is not defined (misspelt, or not imported into that file?)"
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("No implementation of function"):
            for follow in lines[i + 1:i + 4]:
                n = _NO_IMPL.search(follow)
                if n:
                    op, args = n.group("op"), n.group("args")
                    verb = _OPERATORS.get(op)
                    parts = _split_args(args)
                    if verb and len(parts) == 2:
                        joiner = " by " if verb in ("multiply", "divide") else " to the power " if verb == "raise" \
                            else " and "
                        return f"cannot {verb} {parts[0]}{joiner}{parts[1]}"
                    return f"no version of {op} takes ({args})"
            return s
    for line in lines:
        s = line.strip()
        if s and not s.startswith(("Failed in", "During:", "File ", "<source elided>", "^")):
            return s[:300]
    return "Numba could not compile it"


def _split_args(args):
    """Top-level comma split of a type list (commas inside brackets kept)."""
    parts, depth, cur = [], 0, ""
    for c in args:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    return parts
