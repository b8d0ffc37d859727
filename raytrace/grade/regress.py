"""``raytrace regress``: render every scene of a folder and grade it against the
references of another folder.

For a scene ``NAME.json`` (or a course ``NAME.txt``) the references folder holds the
image ``NAME.png`` (or ``.exr``, ``.pfm``) and, optionally, its sidecar
``NAME.ref.json`` (:mod:`.sidecar`): the render settings and the tolerance. The scene is
rendered at the reference's size with the sidecar's settings and compared
(:func:`~raytrace.grade.compare.compare`). Each scene ends as

- ``passed`` / ``failed``: within / over the tolerance (or the z-test);
- ``missing``: no reference image yet (counts as a failure);
- ``error``: the scene, the sidecar or the reference could not be read, or the render
  failed (the message says which file and why);
- ``updated``: with ``update=True``, a failed or missing reference was rewritten from
  this render (with its sidecar); references another program made are kept.
"""
import dataclasses
import datetime
import pathlib
import time

import numpy as np
from userio.outputs import write_bytes_atomic

from ..errors import SceneError
from .compare import Comparison, ZTestOptions, compare
from .criteria import DEFAULT_CRITERIA, DEFAULT_TOLERANCE, format_criteria
from .errors import GradeError
from .images import read_image
from .metrics import DEFAULT_THRESHOLD
from .sidecar import (criteria as sidecar_criteria, find_reference, is_external, read_sidecar,
                      render_settings, sidecar_path, write_sidecar)

SCENE_SUFFIXES = (".json", ".txt")
STATUS_ORDER = {"failed": 0, "missing": 1, "error": 2, "updated": 3, "passed": 4}


@dataclasses.dataclass(eq=False)
class Case:
    """One scene of a regression run (see the module docs for ``status``)."""
    name: str
    scene: pathlib.Path
    reference: pathlib.Path = None
    status: str = "error"
    message: str = ""
    comparison: Comparison = None
    image: object = None              # the render (RenderedImage) when there is one
    settings: dict = dataclasses.field(default_factory=dict)
    criteria: str = ""
    seconds: float = 0.0
    sidecar: dict = None

    @property
    def ok(self):
        return self.status in ("passed", "updated")


def discover(scenes_dir):
    """Scene files of a folder: ``*.json`` (sidecars excluded) and ``*.txt``, by name."""
    d = pathlib.Path(scenes_dir)
    if not d.is_dir():
        raise GradeError(None, "scenes folder not found" if not d.exists() else "is not a folder", file=str(d))
    files = sorted(p for p in d.iterdir() if p.is_file() and p.suffix.lower() in SCENE_SUFFIXES
                   and not p.name.endswith(".ref.json"))
    if not files:
        raise GradeError(None, "no scenes (*.json, *.txt) in this folder", file=str(d))
    return files


def ordered(cases):
    """Failures first (failed, missing, error), then updated, then passed; by name."""
    return sorted(cases, key=lambda c: (STATUS_ORDER[c.status], c.name))


def run(scenes_dir, refs_dir, update=False, only=None, command=None, log=None):
    """Run the regression -> list of :class:`Case` (in scene order). ``only``: names to
    run; ``log(case)`` is called after each scene."""
    refs = pathlib.Path(refs_dir)
    if refs.exists() and not refs.is_dir():
        raise GradeError(None, "is not a folder", file=str(refs))
    if not refs.exists() and not update:
        raise GradeError(None, "references folder not found (use --update to create it)", file=str(refs))
    files = discover(scenes_dir)
    if only:
        unknown = sorted(set(only) - {p.stem for p in files})
        if unknown:
            raise GradeError("--only", f"no scene named {', '.join(unknown)} in {scenes_dir}")
        files = [p for p in files if p.stem in only]
    cases = []
    for path in files:
        case = Case(name=path.stem, scene=path)
        t0 = time.perf_counter()
        try:
            _run_case(case, refs, update, command)
        except (SceneError, GradeError) as exc:
            case.status, case.message = "error", str(exc)
        except OSError as exc:
            case.status, case.message = "error", f"{exc.filename or path}: {exc.strerror or exc}"
        case.seconds = time.perf_counter() - t0
        cases.append(case)
        if log is not None:
            log(case)
    return cases


def _run_case(case, refs, update, command):
    import raytrace
    case.sidecar = read_sidecar(sidecar_path(refs, case.name))
    data = case.sidecar or {}
    case.reference = find_reference(refs, case.name, data)
    expected = None
    if case.reference is not None and case.reference.exists():
        expected = read_image(case.reference, alpha=data.get("alpha", "error"), what="reference")
    elif case.reference is not None and "image" in data:
        raise GradeError("image", f"reference image {case.reference.name} not found",
                         file=str(sidecar_path(refs, case.name)))
    scene = raytrace.load_scene(case.scene)
    overrides = render_settings(data)
    if expected is not None:
        overrides["width"], overrides["height"] = expected.width, expected.height
    z = data.get("ztest")
    try:
        from ..renderer import resolve_settings
        case.settings = resolve_settings(scene, overrides)
        image = raytrace.render(scene, variance=z is not None, **overrides)
    except SceneError as exc:
        if exc.file is None and case.sidecar is not None:
            raise exc.with_file(str(sidecar_path(refs, case.name))) from None
        raise
    case.image = image
    crit = sidecar_criteria(data)
    crit = (() if z is not None else DEFAULT_CRITERIA) if crit is None else crit
    case.criteria = format_criteria(crit) + (("; " if crit else "") + "z-test" if z is not None else "")
    if expected is None:
        case.status, case.message = "missing", "no reference image"
    else:
        ztest = None
        if z is not None:
            var = z.get("variance", f"{case.name}.var.exr")
            ztest = ZTestOptions(alpha=z.get("alpha", 0.01), max_fraction=z.get("max_fraction", 0.0025),
                                 expected_variance=refs / var, expected_spp=z.get("spp"))
        threshold = data.get("threshold", DEFAULT_THRESHOLD)
        case.comparison = compare(image, expected, criteria=crit, threshold=threshold, ztest=ztest)
        case.status = "passed" if case.comparison.passed else "failed"
        case.message = case.comparison.verdict()
    if update and case.status in ("failed", "missing"):
        if is_external(case.sidecar):
            case.message += f"; kept: made by {case.sidecar['made_by']!r} (delete its sidecar to replace it)"
        else:
            _write_reference(case, refs, command)


def _write_reference(case, refs, command):
    """Replace (or create) the reference of ``case`` from its render, with its sidecar."""
    from ..image import encode_image
    data = dict(case.sidecar or {})
    s = case.settings
    kept = {"spp": s["spp"], "seed": s["seed"], "integrator": s["integrator"], "filter": s["filter"]}
    if s["integrator"] == "path":
        kept.update(sampler=s["sampler"], max_depth=s["max_depth"], rr_depth=s["rr_depth"])
    else:
        kept.update(bounces=s["bounces"], shadows=bool(s["shadows"]))
    data.update(kept)
    z = data.get("ztest")
    old = case.reference
    if old is None:
        old = refs / f"{case.name}{'.exr' if z is not None else '.png'}"
    refs.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(old, encode_image(old, case.image))
    if z is not None:
        z = dict(z)
        z.setdefault("variance", f"{case.name}.var.exr")
        z["spp"] = int(case.image.info.spp)
        write_bytes_atomic(refs / z["variance"], encode_image(refs / z["variance"], np.asarray(case.image.variance)))
        data["ztest"] = z
    if "tolerance" not in data and z is None:
        data["tolerance"] = DEFAULT_TOLERANCE
    data["command"] = command or "raytrace regress --update"
    data["made_by"] = f"raytrace {_version()} ({datetime.date.today().isoformat()})"
    write_sidecar(sidecar_path(refs, case.name), data)
    was = case.status
    case.reference = old
    case.status = "updated"
    case.message = f"reference rewritten (was {was}: {case.message})"


def _version():
    from .. import __version__
    return __version__


def verdict(cases):
    """``PASS`` (every scene passed), ``UPDATED`` (none failed, some references were
    rewritten) or ``FAIL``."""
    if not all(c.ok for c in cases):
        return "FAIL"
    return "UPDATED" if any(c.status == "updated" for c in cases) else "PASS"


def headline(cases):
    """What happened, in a few words (the report's heading): ``all 3 passed``, ``2
    references updated``, ``1 passed, 1 reference updated``, ``1 passed, 1 updated, 1
    failed``."""
    counts = {k: sum(c.status == k for c in cases) for k in STATUS_ORDER}
    if counts["passed"] == len(cases):
        return f"all {len(cases)} passed"
    if counts["passed"] + counts["updated"] == len(cases):
        n = counts["updated"]
        done = f"{n} reference{'s' if n != 1 else ''} updated"
        return f"{counts['passed']} passed, {done}" if counts["passed"] else done
    parts = []
    for key in ("passed", "updated", "failed", "missing", "error"):
        n = counts[key]
        if n:
            parts.append(f"{n} error{'s' if n != 1 else ''}" if key == "error" else f"{n} {key}")
    return ", ".join(parts)


def summary(cases):
    """One line: counts and the names of the scenes that did not pass."""
    counts = {k: sum(c.status == k for c in cases) for k in STATUS_ORDER}
    parts = [f"{len(cases)} scene{'s' if len(cases) != 1 else ''}", f"{counts['passed']} passed"]
    for key in ("failed", "missing", "error", "updated"):
        names = [c.name for c in ordered(cases) if c.status == key]
        if names:
            parts.append(f"{len(names)} {key} ({', '.join(names)})")
    return ", ".join(parts)
