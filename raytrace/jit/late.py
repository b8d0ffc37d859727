"""Late binding: a row kernel that calls the kernels below it through symbols bound at load.

Why. A row kernel (``path_rows``, ``whitted_rows``) is compiled with every kernel it calls
linked into its module and optimised again by LLVM, so its cache key includes their code:
an edit of ``ggx_d`` recompiled ``bsdf_eval``, ``bsdf_sample`` *and* ``path_rows``, and the
row kernel was most of the time (5-7 s of an edit's 7 s).

What. :func:`variant` makes a kernel's *late twin* from the same source: its inline
helpers (``trace_path``, ``direct_light`` ...) are declared again over a copy of their
module's globals in which every separately compiled kernel they call (``scene_hit``,
``bsdf_eval``, ``sample_light`` ...: the *bound* kernels) is replaced by a stub. A stub is
typed by compiling (or loading) its kernel for the argument types at hand and lowers to a
call of an external function ``raytrace_late_<digest>``, the digest naming the kernel and
its argument types, not its code. :func:`bind` points that symbol, with
``llvmlite.binding.add_symbol``, at the kernel's *entry for late twins*
(``late_entry.<name>``, which :func:`lowering_pass` adds to every kernel raytrace
compiles): its arguments as LLVM values, except the scene's records
(:data:`SCENE_RECORDS`: the BVH, geometry, lights, environment and media), which a twin
stores once per call of the row kernel and passes by address. So the twin's key holds
its own code, its helpers' and the bound kernels' names and parameters, never their
bodies: after an edit below it only the edited kernels compile, and a kernel that takes
no scene record and calls others is bound to its own twin when it is stale
(:func:`_bind_target`: an edit of ``ggx_d`` compiles ``ggx_d`` alone).

A twin in the on-disk cache records which symbols it calls, with each kernel's argument
and result types (:func:`needed` / :func:`bind_all`); loading it binds them first
(compiling the kernels that are stale) and refuses the file when a result type changed.
Its code is the full build's minus LLVM's inlining across the bound calls: the same
arithmetic in the same order (no fast-math contraction), so the same image bit for bit,
about 1.3x slower (``tests/test_late_binding.py``; ``benchmarks/bench_edit_loop.py``).
:func:`choose` decides, at each call of a row kernel, which build runs, and starts the
full build in the background (:func:`build_in_background`).

Fence. The stub is an intrinsic (public); ``llvmlite.binding.add_symbol`` is public. The
entry needs Numba internals: a subclass of the ``NativeLowering`` pass and of
``lowering.Lower`` (its ``create_cfunc_wrapper`` hook), the call convention's
``get_function_type`` / ``call_function``, a compile result's
``library.get_pointer_to_function`` and ``fndesc.llvm_func_name``, and the target
context's ``active_code_library``. :func:`status` runs a probe twin once per process
(``jit/_late_probe.py``: its value must come back through a bound symbol); on any other
result, or a Numba outside :data:`NUMBA_RANGE`, :func:`available` is False, renders use
the full build, and the reason is said once. ``tests/test_late_binding.py`` fails when the
probe fails on a checked Numba (the oldest and the newest allowed are tested).
"""
import atexit
import contextlib
import functools
import hashlib
import importlib
import inspect
import os
import pickle
import subprocess
import sys
import time
import types
import warnings
import weakref

NUMBA_RANGE = ((0, 61), (0, 68))     # the Numba releases whose internals were checked
PREFIX = "raytrace_late_"
ABI = "scene-byref-1"   # how a twin calls a bound kernel (see ENTRY): part of every twin's key
ENTRY = "late_entry."    # + the kernel's LLVM name: its entry for late twins

_variants = weakref.WeakKeyDictionary()     # full dispatcher -> late twin dispatcher
_stubs = weakref.WeakKeyDictionary()        # bound dispatcher -> its stub
_bound = {}                                 # symbol -> (dispatcher, argument types, result type)
_needed = weakref.WeakKeyDictionary()       # code library being lowered -> symbols it calls
_slots = weakref.WeakKeyDictionary()        # LLVM function being built -> {record type: (slot, stored flag)}
_state = {"checked": False, "reason": None}


def symbol(dispatcher, argtypes):
    """The external name a late twin calls ``dispatcher`` by, for ``argtypes``: the
    kernel's module, name and argument types, never its code."""
    from .cache import signature_text
    py = dispatcher.py_func
    text = f"{py.__module__}.{py.__qualname__}|{signature_text(tuple(argtypes))}"
    return PREFIX + hashlib.sha256(text.encode()).hexdigest()[:24]


# The scene's records: built in Python once per scene, never in a kernel (tests/test_structure.py
# checks the package's kernels for it). A late twin stores each one once per call of the row
# kernel and passes its address; every other argument goes by value.
SCENE_RECORDS = {("raytrace.layout", "Geometry"), ("raytrace.layout", "Lights"), ("raytrace.layout", "Environment"),
                 ("raytrace.layout", "Media"), ("raytrace.accel.build", "Accel"),
                 ("raytrace.accel.instances", "SceneAccel")}


def is_scene_record(numba_type):
    """Whether ``numba_type`` is one of :data:`SCENE_RECORDS` (borrowed or not)."""
    cls = getattr(numba_type, "instance_class", None)
    return cls is not None and (getattr(cls, "__module__", None), getattr(cls, "__qualname__", None)) in SCENE_RECORDS


def lowering_pass():
    """Numba's ``NativeLowering`` pass, subclassed to add to each kernel's code its entry
    for late twins, ``late_entry.<name>``: the kernel's arguments as LLVM values, but
    the scene's records (:func:`is_scene_record`) by address, so that a bound call
    passes a pointer to the record the twin stored once instead of copying every
    array of it (by value, at about 100-200 ns a call, a twin rendered 3.7x slower
    than the full build). None where it cannot be built (then no twin can bind:
    :func:`status` says so)."""
    try:
        return _make_lowering_pass()
    except Exception:       # noqa: BLE001 - the probe reports it
        return None


@functools.lru_cache(maxsize=None)
def _make_lowering_pass():
    from numba.core import lowering
    from numba.core.compiler_machinery import register_pass
    from numba.core.typed_passes import NativeLowering

    class LateEntryLower(lowering.Lower):
        def create_cfunc_wrapper(self):
            super().create_cfunc_wrapper()
            _add_entry(self.context, self.library, self.fndesc)

    @register_pass(mutates_CFG=True, analysis_only=False)
    class LateEntryLowering(NativeLowering):
        _name = "raytrace_native_lowering"

        @property
        def lowering_class(self):
            return LateEntryLower

    return LateEntryLowering


def _add_entry(context, library, fndesc):
    """``late_entry.<name>``: take each scene record from its address, call the kernel
    (Numba's calling convention; LLVM inlines a ``@unit``), report an error as Numba's
    C entry does (under the GIL, as unraisable)."""
    from llvmlite import ir
    module = context.create_module("late_entry")
    inner = ir.Function(module, context.call_conv.get_function_type(fndesc.restype, fndesc.argtypes),
                        fndesc.llvm_func_name)
    params = [context.get_value_type(t).as_pointer() if is_scene_record(t) else context.get_value_type(t)
              for t in fndesc.argtypes]
    entry = ir.Function(module, ir.FunctionType(context.get_value_type(fndesc.restype), params),
                        ENTRY + fndesc.llvm_func_name)
    builder = ir.IRBuilder(entry.append_basic_block("entry"))
    values = [builder.load(a) if is_scene_record(t) else a for a, t in zip(entry.args, fndesc.argtypes)]
    status, out = context.call_conv.call_function(builder, inner, fndesc.restype, fndesc.argtypes, values)
    with builder.if_then(status.is_error, likely=False):
        pyapi = context.get_python_api(builder)
        gil = pyapi.gil_ensure()
        context.call_conv.raise_error(builder, pyapi, status)
        text = pyapi.string_from_string(context.insert_const_string(builder.module, fndesc.qualname))
        pyapi.err_write_unraisable(text)
        pyapi.decref(text)
        pyapi.gil_release(gil)
    builder.ret(out)
    library.add_ir_module(module)


def bind(dispatcher, argtypes):
    """Compile (or load) ``dispatcher`` (or its own twin, :func:`_bind_target`) for
    ``argtypes`` and point its symbol at the compiled code's entry for late twins;
    -> (symbol, result type)."""
    import llvmlite.binding as ll
    argtypes = tuple(argtypes)
    target = _bind_target(dispatcher, argtypes)
    target.compile(argtypes)
    cres = target.overloads[argtypes]
    address = cres.library.get_pointer_to_function(ENTRY + cres.fndesc.llvm_func_name)
    if not address:
        raise LookupError(f"{dispatcher.py_func.__qualname__} has no entry for late twins for {argtypes}")
    name = symbol(dispatcher, argtypes)
    ll.add_symbol(name, address)
    _bound[name] = (dispatcher, argtypes, cres.signature.return_type)
    return name, cres.signature.return_type


def _bind_target(dispatcher, argtypes):
    """What a symbol of ``dispatcher`` is bound to: the kernel itself, or, when it is stale
    (an edit in it or below it), calls kernels of its own and takes none of the scene's
    records, its late twin, which compiles without its callees (``bsdf_eval`` without
    ``ggx_d``: an edit of ``ggx_d`` then compiles ``ggx_d`` alone). A kernel that takes
    scene records (``direct_phong``) is bound as itself: its twin would store them again
    at each of its calls (measured: the Whitted showcase rendered 2.4x slower, for 1 s
    less compiling). Not in ``twin`` mode, which builds the twins of the row kernels over
    the full kernels below them."""
    if mode() != "auto" or any(is_scene_record(t) for t in argtypes) or _ready(dispatcher, argtypes) \
            or not _reaches_bound(dispatcher):
        return dispatcher
    return variant(dispatcher)


def needed(library):
    """What a late twin's compiled ``library`` calls: [(module, qualname, argument types,
    result type)] (what :func:`bind_all` takes)."""
    out = []
    for name in sorted(_needed.get(library, ())):
        dispatcher, argtypes, restype = _bound[name]
        out.append((dispatcher.py_func.__module__, dispatcher.py_func.__qualname__, argtypes, restype))
    return out


def bind_all(entries):
    """Bind every entry of :func:`needed` to the kernels as loaded now; -> the symbols,
    or None (bind nothing more) when a kernel is gone or its result type is not the
    recorded one."""
    names = set()
    for module, qualname, argtypes, restype in entries:
        dispatcher = getattr(importlib.import_module(module), qualname, None)
        if dispatcher is None or not hasattr(dispatcher, "overloads"):
            return None
        name, got = bind(dispatcher, argtypes)
        if got != restype:
            return None
        names.add(name)
    return names


def remember(library, names):
    """Note that a late twin's ``library`` (loaded from the cache) calls ``names``."""
    _needed.setdefault(library, set()).update(names)


def stub(dispatcher):
    """The stand-in for ``dispatcher`` in a late twin (an intrinsic with its parameters)."""
    found = _stubs.get(dispatcher)
    if found is None:
        found = _stubs[dispatcher] = _make_stub(dispatcher)
    return found


def _make_stub(dispatcher):
    from llvmlite import ir
    from numba import types as nt
    from numba.core import cgutils
    from numba.extending import intrinsic

    params = list(inspect.signature(dispatcher.py_func).parameters)

    def typer(args):
        argtypes = tuple(nt.unliteral(a) for a in args)
        name, restype = bind(dispatcher, argtypes)

        def codegen(context, builder, sig, values):
            _needed.setdefault(context.active_code_library, set()).add(name)
            cast = [context.cast(builder, v, t, u) for v, t, u in zip(values, sig.args, argtypes)]
            passed = [_stored_once(builder, v, u) if is_scene_record(u) else v for v, u in zip(cast, argtypes)]
            fnty = ir.FunctionType(context.get_value_type(restype), [v.type for v in passed])
            return builder.call(cgutils.get_or_insert_function(builder.module, fnty, name), passed)
        return restype(*args), codegen

    def _stored_once(builder, value, numba_type):
        """The address of ``value`` (a scene record) in a slot of the function being
        built, stored at the function's first bound call that passes a record of this
        type: a scene record is the same throughout a row kernel's call."""
        slots = _slots.setdefault(builder.function, {})
        if numba_type not in slots:
            slots[numba_type] = (cgutils.alloca_once(builder, value.type),
                                 cgutils.alloca_once(builder, ir.IntType(1)))     # (zeroed in the entry block)
        slot, done = slots[numba_type]
        with builder.if_then(builder.not_(builder.load(done)), likely=False):
            builder.store(value, slot)
            builder.store(ir.Constant(ir.IntType(1), 1), done)
        return slot

    source = (f"def {dispatcher.py_func.__name__}(typingctx, {', '.join(params)}):\n"
              f"    return typer(({', '.join(params)},))\n")
    scope = {"typer": typer}
    exec(source, scope)     # noqa: S102 - an intrinsic needs the kernel's own parameter list
    made = intrinsic(scope[dispatcher.py_func.__name__])
    py = dispatcher.py_func
    made._raytrace_key = f"late {ABI} {py.__module__}.{py.__qualname__}{inspect.signature(py)}"
    return made


# ------------------------------------------------------------------------ the twin
def _is_helper(dispatcher):
    return dispatcher.targetoptions.get("inline") == "always"


def variant(dispatcher):
    """The late twin of ``dispatcher`` (a row kernel, or a kernel that calls others; one
    per dispatcher, made once)."""
    found = _variants.get(dispatcher)
    if found is None:
        found = _variants[dispatcher] = _Rebinder().function(dispatcher, "__late")
        _originals[found] = dispatcher
    return found


def original(dispatcher):
    """The dispatcher whose late twin ``dispatcher`` is, or ``dispatcher`` itself (also
    for None: a compile event of Numba's own, without a dispatcher)."""
    try:
        return _originals.get(dispatcher, dispatcher)
    except TypeError:       # not weakly referenceable: not a twin
        return dispatcher


_originals = weakref.WeakKeyDictionary()    # late twin -> its original


def _reaches_bound(dispatcher, seen=None):
    """Whether ``dispatcher`` calls, itself or through its inline helpers, a kernel of the
    package compiled on its own (what a twin would bind)."""
    from . import keys
    seen = set() if seen is None else seen
    seen.add(dispatcher)
    for callee in keys.callees(dispatcher.py_func):
        if callee in seen or not keys.is_ours(callee.py_func):
            continue
        if not _is_helper(callee) or _reaches_bound(callee, seen):
            return True
    return False


class _Rebinder:
    """Declares helpers again over globals in which bound kernels are stubs."""

    def __init__(self):
        self._done = {}        # id(original) -> replacement
        self._keep = []        # the originals (their ids stay valid)

    def value(self, value):
        from . import keys
        if id(value) in self._done:
            return self._done[id(value)]
        out = value
        if keys._is_dispatcher(value) and keys.is_ours(value.py_func):
            if not _is_helper(value):
                out = stub(value)
            elif _reaches_bound(value):
                out = self.function(value, "")
        elif isinstance(value, types.ModuleType) and keys.is_ours(value):
            out = _ModuleView(value)
            self._keep.append(value)
            self._done[id(value)] = out
            out.fill(value, self)
            return out
        self._keep.append(value)
        self._done[id(value)] = out
        return out

    def function(self, dispatcher, suffix):
        from . import keys, roles
        py = dispatcher.py_func
        scope = dict(py.__globals__)
        for name in keys.code_names(py):
            if name in scope and name != py.__name__:
                scope[name] = self.value(scope[name])
        cells = None
        if py.__closure__:
            cells = tuple(types.CellType(self.value(c.cell_contents)) for c in py.__closure__)
        twin = types.FunctionType(py.__code__, scope, py.__name__, py.__defaults__, cells)
        twin.__qualname__ = py.__qualname__ + suffix
        twin.__module__ = py.__module__
        twin.__doc__ = py.__doc__
        twin.__kwdefaults__ = py.__kwdefaults__
        options = {k: v for k, v in dispatcher.targetoptions.items() if k not in ("nopython", "boundscheck")}
        made = roles.declare(twin, options)
        scope[py.__name__] = made
        self._done[id(dispatcher)] = made
        return made


class _ModuleView(types.ModuleType):
    """A package module as a late twin sees it: its attributes rebound on first use."""

    def __init__(self, module):
        super().__init__(module.__name__, module.__doc__)

    def fill(self, module, rebinder):
        from . import keys
        for name, value in list(vars(module).items()):
            if not name.startswith("__"):
                self.__dict__[name] = rebinder.value(value) if keys._is_dispatcher(value) else value


# ------------------------------------------------------------------------ the fence
def available():
    """Whether late twins can be used here (the probe passed; see the module docstring)."""
    return status()[0]


def status():
    """``(usable, reason)``; the probe runs once per process."""
    if not _state["checked"]:
        _state["checked"] = True
        _state["reason"] = _probe()
        if _state["reason"] is not None:
            warnings.warn(f"raytrace: late-bound kernels are off ({_state['reason']}); "
                          f"an edit recompiles the row kernels too", RuntimeWarning, stacklevel=3)
    return _state["reason"] is None, _state["reason"]


@functools.lru_cache(maxsize=None)
def _probe():
    import numba
    version = tuple(int(p) for p in numba.__version__.split(".")[:2])
    if not NUMBA_RANGE[0] <= version <= NUMBA_RANGE[1]:
        return f"Numba {numba.__version__} is outside the checked {NUMBA_RANGE[0]}..{NUMBA_RANGE[1]}"
    try:
        from . import _late_probe
        got = _late_probe.run()
    except Exception as exc:        # noqa: BLE001 - any failure means: do not use it
        return f"probe failed: {type(exc).__name__}: {exc}"
    if got != _late_probe.EXPECTED:
        return f"probe returned {got!r}, not {_late_probe.EXPECTED!r}"
    return None


# ------------------------------------------------------------------------ which build runs
def mode():
    """``RAYTRACE_LATE``: ``0`` never use late twins, ``twin`` always (tests, the
    background twin build), anything else: when they save a compile (:func:`choose`)."""
    value = os.environ.get("RAYTRACE_LATE", "1").strip().lower()
    return "off" if value in ("0", "off", "no", "false") else ("twin" if value == "twin" else "auto")


def argument_types(dispatcher, args):
    """The Numba types ``dispatcher`` would be compiled for, called with ``args``."""
    return tuple(dispatcher.typeof_pyval(a) for a in args)


def _ready(dispatcher, sig):
    from .cache import dispatcher_cache
    if sig in dispatcher.overloads:
        return True
    cache = dispatcher_cache(dispatcher)
    return cache is not None and cache.has_signature(sig)


def choose(kernel, args):
    """The dispatcher to call ``kernel(*args)`` with (a row kernel):

    - ``kernel`` itself when it is compiled or cached for these argument types (the full
      build), when late twins are off or unusable here, or when its twin is not cached
      either (compiling the full build then costs no more than the twin; the twin is
      compiled in the background, for the next edit);
    - else its late twin (cached: only the kernels it binds that are stale compile), and
      the full build is started in the background (:func:`build_in_background`), which
      takes over on the first call after it is in the cache.
    """
    chosen = mode()
    if chosen == "off" or not _is_row_kernel(kernel):
        return kernel
    sig = argument_types(kernel, args)
    if chosen == "auto" and _ready(kernel, sig) or not available():
        return kernel
    twin = variant(kernel)
    if chosen == "twin":
        return twin
    if not _ready(twin, sig):
        _later(kernel, sig, twin=True)      # so that the next edit finds it
        return kernel
    try:
        twin.compile(sig)   # bind, compiling what is stale
    except Exception:       # noqa: BLE001 - code that does not compile: the full build says where, as Numba does
        return kernel
    if _later(kernel, sig, twin=False):
        print(f"raytrace: {kernel.py_func.__qualname__} is stale after the edit: rendering with its late-bound "
              f"twin (the kernels it calls are bound as loaded; renders are slower) while the full build "
              f"compiles in the background", file=sys.stderr, flush=True)
    return twin


GRACE_SECONDS = 10.0    # a background build waits this long for the render that asked
_asked = {}             # (kernel, its key, signature, twin?) -> [first asked, or None once started, kernel, sig]


def _later(kernel, sig, twin):
    """Start :func:`build_in_background` once this process has rendered for
    :data:`GRACE_SECONDS` since asking (checked at each :func:`choose`: each pass or band),
    or when it exits, whichever comes first: a short render (the edit loop's image) keeps
    every core, a long one gets the full build (which renders about 1.3x faster) soon.
    -> whether this is the first time it is asked for (per kernel version and
    signature: an edit asks again)."""
    from .cache import dispatcher_cache, signature_text
    tag = (kernel.py_func.__qualname__, dispatcher_cache(kernel).dependency_key(), signature_text(sig), twin)
    now = time.monotonic()
    if not _asked:
        atexit.register(_start_asked)
    first = tag not in _asked
    entry = _asked.setdefault(tag, [now, kernel, sig])
    if entry[0] is not None and now - entry[0] >= GRACE_SECONDS:
        _start_asked(tag)
    return first


def _start_asked(only=None):
    for tag in [only] if only is not None else list(_asked):
        entry = _asked[tag]
        if entry[0] is not None:
            entry[0] = None
            build_in_background(entry[1], entry[2], twin=tag[3])


def twin_stands_in(dispatcher):
    """Whether :func:`choose` would render with the late twin of row kernel
    ``dispatcher`` instead of compiling it (its full build stale, its twin cached for
    some argument types; by the cache's file names, as :func:`raytrace.jit.plan.stale`
    judges the full build)."""
    from .cache import dispatcher_cache
    if mode() != "auto" or not _is_row_kernel(dispatcher) or dispatcher.overloads:
        return False
    twin = dispatcher_cache(variant(dispatcher))
    return twin is not None and twin.has_key() and available()


def _is_row_kernel(dispatcher):
    return dispatcher.targetoptions.get("nogil") and not dispatcher.py_func.__qualname__.endswith("__late")


# ------------------------------------------------------------------------ the background build
_CHILD = ("import pickle, sys, raytrace.jit.late as late; "
          "late.build_here(*pickle.loads(sys.stdin.buffer.read()))")
LOCK_SECONDS = 900      # a build lock older than this is taken to be a dead process's


def build_in_background(kernel, sig, twin=False):
    """Compile ``kernel`` (``twin``: its late twin) for ``sig`` in a detached process of
    low priority that writes it to the cache and exits; not while another process builds
    it (a lock file in the cache says one is running). -> the process, or None (one
    already runs, no cache folder, or it cannot start)."""
    from .cache import dispatcher_cache, signature_text
    cache = dispatcher_cache(kernel)
    folder = cache.folder() if cache is not None else None
    if folder is None or os.environ.get("RAYTRACE_NO_WARMUP"):
        return None
    tag = (kernel.py_func.__qualname__, cache.dependency_key(), signature_text(sig), twin)
    lock = folder / f".building-{hashlib.sha256(repr(tag).encode()).hexdigest()[:16]}"
    if not _take_lock(lock):
        return None
    payload = pickle.dumps((kernel.py_func.__module__, kernel.py_func.__qualname__, sig, twin, str(lock)))
    env = dict(os.environ, RAYTRACE_LATE="0", RAYTRACE_NO_WARMUP="1",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))     # the code this process runs
    try:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, env=env)
        proc.stdin.write(payload)
        proc.stdin.close()
    except OSError:
        _release(lock)
        return None
    return proc


def _take_lock(lock):
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        try:
            if time.time() - lock.stat().st_mtime < LOCK_SECONDS:
                return False
            lock.unlink()
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except OSError:
            return False
    except OSError:
        return False
    os.close(fd)
    return True


def _release(lock):
    try:
        os.unlink(lock)
    except OSError:
        pass


def build_here(module, qualname, sig, twin, lock):
    """Child side of :func:`build_in_background`."""
    try:
        with contextlib.suppress(OSError, AttributeError):
            os.nice(10)
        kernel = getattr(importlib.import_module(module), qualname)
        (variant(kernel) if twin else kernel).compile(sig)
    finally:
        _release(lock)
