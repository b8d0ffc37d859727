"""The sidecar of a reference image: ``NAME.ref.json`` beside ``NAME.png`` (or ``.exr``,
``.pfm``) in a references folder. It says how the reference was made and how to judge
a render against it:

    {
      "spp": 4, "seed": 0,                        render settings (see RENDER_KEYS)
      "tolerance": "mae<=1/255,over<=0.02,block<=4/255",      or "metric": "rmse", "tolerance": 0.01
      "threshold": 0.0314,                        the 'over' metric's per-pixel threshold
      "command": "raytrace regress scenes refs --update",
      "made_by": "raytrace 0.1.0"
    }

Render settings in the sidecar win over the scene file's (a course scene rendered by the
course's own program: the sidecar says what that program did); settings it omits come
from the scene, then the renderer's defaults. The image size is always the reference
image's. ``"ztest": {"alpha": 0.01, "max_fraction": 0.0025, "variance": "NAME.var.exr",
"spp": 65536}`` judges by the z-test instead (float references only). ``"image"`` names
the reference file when it is not ``NAME`` + extension; ``"alpha"`` the treatment of
transparent pixels. A reference whose ``made_by`` does not start with ``raytrace`` was
made by another program and is never overwritten by ``--update``. Unknown keys are
errors (a typo must not silently drop a setting).
"""
import json
import pathlib

from userio.limits import check_int, check_number
from userio.outputs import write_bytes_atomic

from .criteria import parse_criteria, parse_number
from .errors import GradeError
from .images import ALPHA_POLICIES

SUFFIX = ".ref.json"
IMAGE_SUFFIXES = (".png", ".exr", ".pfm")
RENDER_KEYS = ("spp", "seed", "integrator", "sampler", "filter", "max_depth", "rr_depth", "bounces",
               "shadows", "epsilon")
OTHER_KEYS = ("image", "metric", "tolerance", "threshold", "alpha", "ztest", "command", "made_by", "note")
ZTEST_KEYS = ("alpha", "max_fraction", "variance", "spp")
_INT_KEYS = ("spp", "seed", "max_depth", "rr_depth", "bounces")
MAX_SPP = 2 ** 40        # a stored sample count above this is not a real render's


def sidecar_path(refs_dir, name):
    return pathlib.Path(refs_dir) / f"{name}{SUFFIX}"


def read_sidecar(path):
    """The checked sidecar dict at ``path``, or None when there is none."""
    path = pathlib.Path(path)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise GradeError(None, "not UTF-8 text", file=str(path)) from None
    except json.JSONDecodeError as exc:
        raise GradeError(f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}",
                         file=str(path)) from None
    check_sidecar(data, str(path))
    return data


def check_sidecar(data, file):
    """Raise GradeError (naming ``file`` and the key) for a malformed sidecar."""
    if not isinstance(data, dict):
        raise GradeError(None, "a sidecar must be a JSON object", file=file)
    for key in data:
        if key not in RENDER_KEYS + OTHER_KEYS:
            raise GradeError(key, f"unknown key (known: {', '.join(RENDER_KEYS + OTHER_KEYS)})", file=file)
    for key in _INT_KEYS:
        if key in data and (isinstance(data[key], bool) or not isinstance(data[key], int)):
            raise GradeError(key, f"must be an integer, got {data[key]!r}", file=file)
    if "spp" in data:
        check_int(data["spp"], "spp", lo=1, hi=MAX_SPP, error=GradeError, file=file)
    for key in ("integrator", "sampler", "filter", "image", "command", "made_by", "note", "metric"):
        if key in data and not isinstance(data[key], str) and not (key == "metric" and isinstance(data[key], list)):
            raise GradeError(key, f"must be a string, got {data[key]!r}", file=file)
    if "shadows" in data and not isinstance(data["shadows"], bool):
        raise GradeError("shadows", f"must be true or false, got {data['shadows']!r}", file=file)
    if "alpha" in data and data["alpha"] not in ALPHA_POLICIES:
        raise GradeError("alpha", f"must be one of {', '.join(ALPHA_POLICIES)}", file=file)
    try:
        criteria(data)
        if "threshold" in data:
            parse_number(data["threshold"], "threshold")
        if "epsilon" in data:
            parse_number(data["epsilon"], "epsilon")
    except GradeError as exc:
        raise exc.with_file(file) from None
    z = data.get("ztest")
    if z is not None:
        if not isinstance(z, dict) or any(k not in ZTEST_KEYS for k in z):
            raise GradeError("ztest", f"must be an object with keys among {', '.join(ZTEST_KEYS)}", file=file)
        if "variance" in z and not isinstance(z["variance"], str):
            raise GradeError("ztest.variance", "must be a file name", file=file)
        if "spp" in z:
            check_int(z["spp"], "ztest.spp", lo=1, hi=MAX_SPP, error=GradeError, file=file)
        if "alpha" in z:
            check_number(z["alpha"], "ztest.alpha", lo=0.0, hi=1.0, lo_open=True, error=GradeError, file=file)
            if z["alpha"] >= 1:
                raise GradeError("ztest.alpha", f"must be < 1, got {z['alpha']:g}", file=file)
        if "max_fraction" in z:
            check_number(z["max_fraction"], "ztest.max_fraction", lo=0.0, hi=1.0, error=GradeError, file=file)
            if z["max_fraction"] >= 1:
                raise GradeError("ztest.max_fraction", f"must be < 1, got {z['max_fraction']:g}", file=file)


def criteria(data):
    """The sidecar's criteria (a tuple; None when it states none)."""
    if "tolerance" not in data:
        if "metric" in data:
            raise GradeError("tolerance", "a metric needs a tolerance")
        return None
    return parse_criteria(data["tolerance"], data.get("metric"), where="tolerance")


def render_settings(data):
    """The render overrides a sidecar fixes (RENDER_KEYS present in it)."""
    return {k: data[k] for k in RENDER_KEYS if k in data}


def is_external(data):
    """True when another program made the reference (``--update`` keeps it)."""
    return data is not None and not str(data.get("made_by", "raytrace")).startswith("raytrace")


def find_reference(refs_dir, name, data=None):
    """The reference image of ``name``: the sidecar's ``image``, else the one existing
    ``NAME.png/.exr/.pfm``; None when there is none."""
    refs_dir = pathlib.Path(refs_dir)
    if data and "image" in data:
        return refs_dir / data["image"]
    found = [refs_dir / f"{name}{s}" for s in IMAGE_SUFFIXES if (refs_dir / f"{name}{s}").exists()]
    if len(found) > 1:
        raise GradeError(None, f"more than one reference image for {name}: "
                               f"{', '.join(p.name for p in found)} (name one in its sidecar's 'image')")
    return found[0] if found else None


def write_sidecar(path, data):
    """Write ``data`` as an indented JSON sidecar, atomically."""
    check_sidecar(data, str(path))
    write_bytes_atomic(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
