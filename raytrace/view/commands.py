"""What a request may say: a command's JSON body and every number in a request, bounded
where it enters the preview (docs/live-preview.md, "Security").

- a command body is at most :data:`MAX_BODY` bytes of JSON nested at most
  :data:`MAX_DEPTH` deep (checked before parsing), a JSON object, with finite numbers only
  (``NaN``, ``Infinity`` and numbers that overflow, such as ``1e999``, are refused) and
  integers of at most 15 digits;
- each number a command or a query carries has its own range (:data:`EXPOSURE`,
  :data:`DOLLY`, :data:`ANGLE`, :data:`COORDINATE`).

Every refusal is a :class:`BadRequest` with one line, answered with status 400.
"""
import json
import math
import re

MAX_BODY = 1 << 16           # bytes of a command's body
MAX_DEPTH = 8                # nesting of arrays and objects in a command
MAX_INT_DIGITS = 15
EXPOSURE = (-30.0, 30.0)     # stops, for /frame.png and /save alike
DOLLY = (1e-3, 1e3)          # the factor of one dolly
ANGLE = (-360.0, 360.0)      # degrees of one orbit step (yaw, pitch)
COORDINATE = 1e12            # the largest magnitude of a number in a camera set by the page

_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(rb"[\[\]{}]")
_INTEGER = re.compile(r"-?\d{1,9}")


class BadRequest(Exception):
    """A request the preview refuses (status 400 and this one line)."""


def _refuse_constant(name):
    raise BadRequest(f"numbers must be finite, got {name}")


def _float(text):
    value = float(text)
    if not math.isfinite(value):
        raise BadRequest(f"numbers must be finite, got {text[:40]}")
    return value


def _int(text):
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BadRequest(f"integers have at most {MAX_INT_DIGITS} digits, got one of {len(text)} characters")
    return int(text)


def depth(data):
    """How deeply the arrays and objects of the JSON text ``data`` (bytes) nest, found
    without parsing it (string contents do not count)."""
    deepest = level = 0
    for m in _BRACKETS.finditer(_STRINGS.sub(b'""', data)):
        level += 1 if m.group() in (b"[", b"{") else -1
        deepest = max(deepest, level)
    return deepest


def parse_command(data):
    """The JSON object of a command body (bytes), within every limit of the module
    docstring; :class:`BadRequest` otherwise."""
    if len(data) > MAX_BODY:
        raise BadRequest(f"a command is at most {MAX_BODY} bytes")
    if depth(data) > MAX_DEPTH:
        raise BadRequest(f"a command nests arrays and objects at most {MAX_DEPTH} deep")
    try:
        value = json.loads(data or b"null", parse_constant=_refuse_constant, parse_float=_float,
                           parse_int=_int)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"not JSON: {str(exc).splitlines()[0]}") from None
    if not isinstance(value, dict):
        raise BadRequest("a command is a JSON object")
    return value


def number(value, where, lo, hi):
    """``value`` (from a parsed command) as a float within [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRequest(f"{where}: must be a number, got {json.dumps(value)[:40]}")
    if not lo <= value <= hi:
        raise BadRequest(f"{where}: must be within {lo:g} .. {hi:g}, got {value:g}")
    return float(value)


def query_number(text, where, lo, hi):
    """A number given in a query string (``exposure=E``) within [lo, hi]."""
    try:
        value = float(text) if len(text) <= 40 else math.nan
    except ValueError:
        raise BadRequest(f"{where} must be a number") from None
    if not lo <= value <= hi:                # NaN fails too
        raise BadRequest(f"{where} must be within {lo:g} .. {hi:g} stops")
    return value


def query_int(text, where):
    """An integer of at most 9 digits given in a query string."""
    if not _INTEGER.fullmatch(text):
        raise BadRequest(f"give integer {where}")
    return int(text)


def camera_numbers(value, where="set"):
    """Check that every number in the camera dict ``value`` (any nesting) is within
    +-:data:`COORDINATE`; returns ``value``."""
    stack = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, f"{at}.{k}") for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(item))
        elif isinstance(item, (int, float)) and not isinstance(item, bool) and abs(item) > COORDINATE:
            raise BadRequest(f"{at}: must be within -{COORDINATE:g} .. {COORDINATE:g}, got {item:g}")
    return value
