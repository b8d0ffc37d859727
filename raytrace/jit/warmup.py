"""Compile the integrator kernel in a second process while this one loads the scene.

With an empty Numba cache a first render pays two compiles one after the other: the BVH
builder (inside ``load_scene``) and the integrator kernel (inside ``render``). On a machine
with two or more cores, :func:`start` compiles the integrator in a child process, which
renders a one-pixel scene with an empty BVH (so it does not compile the builder too) and
thereby fills the on-disk cache; the parent loads the scene meanwhile, then :func:`wait`\\ s
and loads the kernel from the cache. Nothing happens when the kernel is already cached,
with one core, or when ``RAYTRACE_NO_WARMUP`` is set.

:class:`CompileNotice` tells the user while this happens: what compiles and why
("compiling 3 kernels after edits to kernels/bsdf.py: ggx_d", "... first run here"), its
progress and the seconds, then how long it took.
:func:`notice_on_compile` does the same for a block that may or may not compile (a scene
with instances compiles its own specialisation of the integrator, see
``raytrace.accel.instances``; depth and normal images and debug views use kernels of
their own): it listens to Numba's compile events and speaks only when one starts.
:class:`CompileTimer` measures the compiling with the same events, so that renders report
their compile time apart from their render time (``RenderInfo.compile_seconds``).
"""
import contextlib
import json
import os
import pathlib
import subprocess
import sys
import time
import types

from .notice import CompileNotice, CompileTimer, notice_on_compile  # noqa: F401  (the CLI's names)

_CHILD = ("import sys, raytrace.jit.warmup as w; "
          "w.compile_here(sys.argv[1], sys.argv[2] == '1', sys.argv[3] == '1')")


def _kernel(integrator):
    """The row kernel of ``integrator`` (the table's, :mod:`raytrace.integrators`; one for
    scenes with and without media)."""
    from .. import integrators
    return integrators.integrator(integrator).row_kernel()


def _builder():
    from ..accel import build
    return [build._build_binary, build._plan_wide, build._emit_wide]


def roots(integrator=None, builder=False):
    """The kernels a render starts from (what Numba compiles, with all they call): the
    integrator's row kernel and, with ``builder``, the BVH builder's three."""
    out = _builder() if builder else []
    return out + ([_kernel(integrator)] if integrator else [])


def _dispatcher_cached(dispatcher):
    from . import cache, plan
    if cache.dispatcher_cache(dispatcher) is not None:
        return not plan.stale([dispatcher])
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    return index is None or os.path.exists(index)


def _media_units():
    """The media code's units (compiled alone): a path row kernel compiled for a scene
    with media made them; one row kernel serves both kinds of scene, so its cache alone
    cannot say which kinds it holds."""
    from ..kernels import media
    return [media._free_flight, media._shadow_transmittance]


def is_cached(integrator, media=False):
    """True when the integrator's kernels (for a scene with ``media`` or without) are
    cached as the code is now (nothing of them would compile)."""
    units = _media_units() if media and integrator == "path" else []
    return all(_dispatcher_cached(d) for d in [_kernel(integrator)] + units)


def builder_cached():
    """True when the BVH builder's kernels are in the on-disk cache."""
    return all(_dispatcher_cached(f) for f in _builder())


PEEK_BYTES = 1 << 26      # a scene file larger than this is not peeked at (the loader judges it)


def _peek(scene_path):
    """The scene file's JSON (None when it is not JSON, does not parse, or is not a
    regular file of at most :data:`PEEK_BYTES`: a FIFO, ``/dev/zero`` or a huge file is
    never opened here, the loader says what it is)."""
    from userio.files import file_kind
    path = pathlib.Path(scene_path)
    if path.suffix.lower() != ".json":
        return None
    try:
        st, kind = file_kind(path)
        if st is None or kind is not None or st.st_size > PEEK_BYTES:
            return None
        data = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):      # the loader reports these properly
        return None
    return data if isinstance(data, dict) else None


def readable_json(scene_path):
    """Whether the scene file is JSON that parses (so :func:`integrator_of` is sure)."""
    return _peek(scene_path) is not None


def integrator_of(scene_path, override=None):
    """The integrator a scene file asks for (cheap peek; 'whitted' when unsure), by the
    loader's own rule (:func:`raytrace.settings.integrator_name`)."""
    from ..settings import INTEGRATORS, integrator_name
    if override:
        return integrator_name(None, override)
    if pathlib.Path(scene_path).suffix.lower() in (".gltf", ".glb"):
        return "path"                       # glTF files render with the path tracer
    try:
        kind = integrator_name((_peek(scene_path) or {}).get("integrator", {}).get("type"))
    except AttributeError:
        return "whitted"
    return kind if kind in INTEGRATORS else "whitted"


def uses_media(scene_path):
    """Whether a JSON scene needs the media kernels (cheap peek, by the loader's own rule
    :func:`raytrace.scene.media.uses_media` on the file's own materials; False when
    unsure)."""
    from ..scene.media import uses_media as needs_media
    data = _peek(scene_path)
    if data is None:
        return False
    materials = data.get("materials", {})
    try:
        return bool(needs_media(data, materials if isinstance(materials, dict) else {}))
    except (AttributeError, TypeError, KeyError):       # not a valid scene: the loader says why
        return False


def uses_instances(scene_path):
    """Whether a JSON scene shows a prototype by two or more ``instance`` objects (cheap
    peek; False when unsure): its integrator is then compiled for an accel with instance
    levels (a prototype shown once is placed in world space)."""
    uses = {}

    def walk(objects):
        for obj in objects if isinstance(objects, list) else ():
            if isinstance(obj, dict):
                if obj.get("type") == "instance":
                    name = str(obj.get("prototype"))
                    uses[name] = uses.get(name, 0) + 1
                walk(obj.get("children"))
    walk((_peek(scene_path) or {}).get("objects"))
    return any(n >= 2 for n in uses.values())


@contextlib.contextmanager
def ahead(scene_path, integrator=None, timer=None):
    """The warm-up of the CLI and the preview alike: while the block loads the scene, the
    scene's integrator (``integrator`` overrides the file's) compiles in other processes
    when it is not cached (:func:`start`); afterwards the block's end waits for them
    (the wait counts as compiling in ``timer``) and loads what they cached, compiling
    here whatever they did not (:func:`compile_here`). Yields a record whose ``cold``
    says whether anything was stale; setting its ``compile`` to False (a scene that did
    not load) skips the last step."""
    kind = integrator_of(scene_path, integrator)
    media = uses_media(scene_path)
    state = types.SimpleNamespace(cold=not (is_cached(kind, media) and builder_cached()), compile=True)
    instanced = uses_instances(scene_path)
    # where the row kernel's late twin stands in (raytrace.jit.late), what is stale is
    # compiled here, as twins of its own where that is less (no full units in workers)
    from . import late
    procs = start(kind, instanced, media) if state.cold and not late.twin_stands_in(_kernel(kind)) else None
    try:
        yield state
    finally:
        wait(procs, timer=timer)
    if state.cold and state.compile:
        compile_here(kind, instanced, media)


def start(integrator, instanced=False, media=False):
    """Start compiling in other processes when it would help; returns the processes (a
    list, possibly empty), or None when ``RAYTRACE_NO_WARMUP`` is set. With a recorded plan (``raytrace.jit.parallel``) the
    integrator's stale units compile in parallel workers and the row kernel is left to
    :func:`compile_here`; without one, one child compiles the whole integrator.
    ``instanced``, ``media``: for a scene with instances, with media (see :func:`compile_here`)."""
    if os.environ.get("RAYTRACE_NO_WARMUP"):
        return None
    if (os.cpu_count() or 1) < 2 or is_cached(integrator, media):
        return []
    from . import parallel
    root = _kernel(integrator)
    workers = parallel.start([(root, parallel.variant_name(root, instanced))])
    if workers:
        return workers
    try:
        return [subprocess.Popen([sys.executable, "-c", _CHILD, integrator, "1" if instanced else "0",
                                  "1" if media else "0"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)]
    except OSError:
        return []


def wait(procs, timeout=300, timer=None):
    """Wait for the processes of :func:`start`; a failed or slow one only costs the parent
    a compile. The wait counts as compiling in ``timer`` (a :class:`CompileTimer`)."""
    procs = [p for p in (procs if isinstance(procs, (list, tuple)) else [procs]) if p is not None]
    if not procs:
        return
    deadline = time.perf_counter() + timeout
    with timer.counting() if timer is not None else contextlib.nullcontext():
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.perf_counter()))
            except subprocess.TimeoutExpired:
                proc.kill()


# a medium every ray starts in: the media kernels, as small as a scene with media gets
MEDIA_PART = {"media": {"air": {"type": "homogeneous", "sigma_t": 0.01}}, "medium": "air"}


def compile_here(integrator, instanced=False, media=False):
    """Child side: render one pixel of a scene with an empty BVH (a plane only); with
    ``instanced`` through an accel with (empty) instance levels, so that the kernels are
    compiled for scenes with instances; with ``media`` in a homogeneous medium
    (:data:`MEDIA_PART`), so that the media kernels compile."""
    import dataclasses

    import raytrace
    from ..accel.instances import with_empty_instance_levels
    scene = raytrace.load_scene({
        "camera": {"center": [0, 1, 0], "direction": [0, -1, 0], "up": [0, 0, -1]},
        "integrator": {"type": integrator},
        "lights": [{"type": "directional", "direction": [0, -1, 0]}],
        "objects": [{"type": "plane", "normal": [0, 1, 0]}],
        **(MEDIA_PART if media else {}),
    })
    if instanced:
        scene = dataclasses.replace(scene, accel=with_empty_instance_levels(scene.accel))
    raytrace.render(scene, width=1, height=1, spp=1)
    from . import parallel
    parallel.record(_kernel(integrator))   # the plan that lets the next cold start go parallel
