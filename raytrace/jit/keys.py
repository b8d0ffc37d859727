"""A kernel's cache key: its own code and everything it can bake in, nothing else.

Numba compiles a kernel together with every jitted function it calls (their LLVM IR is
linked into the kernel's and inlined) and bakes in the module-level constants it reads.
Its own cache only checks the kernel's source file, so an edited callee in another file
would leave a stale kernel. Here a kernel's key is a SHA-256 over

- its **code object** as Python compiled it (bytecode, constants, names, nested code;
  not line numbers, not the docstring): a comment, a docstring or a blank line changes
  nothing, any edit of the body changes the key;
- every **global name** the code reads, resolved in the function's module as it is now:
  a jitted function contributes its own key (recursively: a callee two files away is
  part of the key), a number, string, tuple or NumPy array its value, a ``NamedTuple``
  class its fields, a module its attributes that the code names;
- other objects of this package (Numba overloads, intrinsics, plain helpers that they
  call): the digest of their whole module and of the package modules it refers to
  (coarse, but these rarely change and never go stale): its functions' and classes'
  code and its ``UPPER_CASE`` constants, not the lower-case state a module changes at
  run time (``borrow``'s and ``simd``'s probe results, which therefore are not part of
  any key: a failed probe compiles the same kernels' slower, equally correct variant);
- the options of the decorator (``inline``, ``forceinline``, ``error_model`` ...), the
  closure cells and default arguments;
- a process-wide salt: Numba, llvmlite, NumPy and Python versions, and the kernels'
  mode switches (``raytrace.jit.modes.mode_tag``), which act on code through
  module globals at import time.

Keys are computed from the objects that are loaded (never re-read from the file), so a
key always describes the code that will be compiled. They are memoised per function
object; a module imported again gives new function objects and new keys.
"""
import hashlib
import sys
import types
import weakref

KEY_VERSION = "4"     # bump when the key's recipe changes
PACKAGES = ("raytrace",)

_keys = weakref.WeakKeyDictionary()     # py_func -> hex key
_modules = {}                           # module name -> (module object, digest)
_salt = []


def is_ours(obj):
    """Whether ``obj`` (a module, or an object with ``__module__``) belongs to this package."""
    name = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return isinstance(name, str) and name.split(".")[0] in PACKAGES


def salt():
    """The process-wide part of every key (versions and mode switches)."""
    if not _salt:
        import llvmlite
        import numba
        import numpy

        from . import modes
        _salt.append(f"v{KEY_VERSION}|numba {numba.__version__}|llvmlite {llvmlite.__version__}|"
                     f"numpy {numpy.__version__}|{sys.implementation.cache_tag}|{modes.mode_tag()}")
    return _salt[0]


def forget():
    """Drop every memoised key and module digest: the next lookups compute them from the
    code as it is loaded now (after a test undid a patch of a package module)."""
    _keys.clear()
    _modules.clear()


def function_key(py_func):
    """The key (64 hex digits) of the jitted function whose Python function is ``py_func``."""
    key = _keys.get(py_func)
    if key is None:
        h = hashlib.sha256(salt().encode())
        _feed_function(h, py_func, set())
        key = _keys[py_func] = h.hexdigest()
    return key


def _is_dispatcher(value):
    from numba.core.dispatcher import Dispatcher
    return isinstance(value, Dispatcher)


def _feed_function(h, py_func, busy):
    """Feed ``py_func``'s code, options and what it refers to into ``h``."""
    h.update(f"fn {py_func.__module__}.{py_func.__qualname__}\n".encode())
    own = py_func.__globals__.get(py_func.__name__)
    if _is_dispatcher(own) and own.py_func is py_func:
        h.update(f"options {sorted(own.targetoptions.items())!r}\n".encode())
    else:       # made inside a function: that function's code (and module) holds the options
        h.update(f"made in {module_digest(sys.modules[py_func.__module__])}\n".encode())
    names = set()
    _feed_code(h, py_func.__code__, names, py_func.__doc__)
    scope = py_func.__globals__
    busy = busy | {py_func}
    for name in sorted(names):
        if name in scope:
            h.update(f"global {name}=".encode())
            _feed_value(h, scope[name], names, busy)
    for cell in py_func.__closure__ or ():
        h.update(b"cell=")
        try:
            contents = cell.cell_contents
        except ValueError:                      # an empty cell
            contents = None
        _feed_value(h, contents, names, busy)
    for default in (py_func.__defaults__ or ()) + tuple((py_func.__kwdefaults__ or {}).items()):
        h.update(b"default=")
        _feed_value(h, default, names, busy)


def _feed_code(h, code, names, doc=None):
    """Bytecode, constants (nested code objects recursively) and names of ``code``; the
    names it reads are added to ``names``. Line numbers are left out; so is the
    docstring (the first constant when it equals ``doc``, or None where there is none)."""
    h.update(code.co_code)
    h.update(repr((code.co_name, code.co_argcount, code.co_posonlyargcount,
                   code.co_kwonlyargcount, code.co_flags, code.co_names, code.co_varnames,
                   code.co_freevars, code.co_cellvars)).encode())
    names.update(code.co_names)
    consts = code.co_consts
    if consts and (consts[0] is None or (doc is not None and consts[0] == doc)):
        consts = consts[1:]
    for const in consts:
        if isinstance(const, types.CodeType):
            _feed_code(h, const, names)
        else:
            h.update(f"{type(const).__name__}:{const!r};".encode())


def _feed_value(h, value, names, busy):
    """What a global (or closure cell, or default) contributes to a key."""
    if _is_dispatcher(value):
        if value.py_func in busy:
            h.update(f"cycle {value.py_func.__qualname__};".encode())
            return
        h.update(f"jit {sorted(value.targetoptions.items())!r} ".encode())
        sub = hashlib.sha256()
        _feed_function(sub, value.py_func, busy)
        h.update(sub.digest())
        return
    late_key = getattr(value, "_raytrace_key", None)
    if isinstance(late_key, str):       # a late twin's stub (raytrace.jit.late)
        h.update(f"{late_key};".encode())
        return
    if isinstance(value, types.ModuleType):
        h.update(f"module {value.__name__}".encode())
        if is_ours(value):              # the attributes the code may name
            for name in sorted(names):
                if name in vars(value):
                    h.update(f".{name}=".encode())
                    _feed_value(h, vars(value)[name], names, busy)
        h.update(b";")
        return
    simple = _simple(value)
    if simple is not None:
        h.update(simple)
        return
    if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields"):
        h.update(f"namedtuple {value.__module__}.{value.__qualname__}{value._fields!r}"
                 f"{getattr(value, '__annotations__', {})!r};".encode())
        return
    if is_ours(value):
        name = value.__module__ if not isinstance(value, types.ModuleType) else value.__name__
        h.update(f"in {name} ".encode())
        h.update(module_digest(sys.modules[name]).encode())
        return
    h.update(f"ext {getattr(value, '__module__', '')}."
             f"{getattr(value, '__qualname__', type(value).__qualname__)};".encode())


def _simple(value):
    """Bytes describing a plain value (numbers, strings, arrays, tuples of them), or None."""
    import numpy as np

    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r};".encode()
    if isinstance(value, np.generic):
        return f"{value.dtype.str}:{value!r};".encode()
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return f"array {value.dtype.str}{value.shape} {digest};".encode()
    if isinstance(value, np.dtype):
        return f"dtype {value.descr!r};".encode()
    if type(value) is dict:
        items = [(_simple(k), _simple(v)) for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))]
        if all(k is not None and v is not None for k, v in items):
            return b"dict(" + b"".join(k + b":" + v for k, v in items) + b");"
        return None
    if type(value) in (tuple, list, frozenset):
        parts = [_simple(v) for v in (sorted(value, key=repr) if type(value) is frozenset else value)]
        if all(p is not None for p in parts):
            return f"{type(value).__name__}(".encode() + b"".join(parts) + b");"
    return None


def module_digest(module):
    """A digest of a package module as loaded, and of the package modules it refers to:
    the code of its functions, classes and jitted functions, and its plain values.
    Used for the objects a key cannot follow one by one (overloads, intrinsics)."""
    h = hashlib.sha256()
    for name in sorted(_module_closure(module)):
        h.update(f"{name}:{_own_digest(sys.modules[name])}\n".encode())
    return h.hexdigest()


def _module_closure(module):
    """The names of ``module`` and of the package modules it refers to, transitively."""
    seen, todo = set(), [module]
    while todo:
        mod = todo.pop()
        if mod.__name__ in seen:
            continue
        seen.add(mod.__name__)
        for value in list(vars(mod).values()):
            target = value if isinstance(value, types.ModuleType) else sys.modules.get(
                getattr(value, "__module__", None) or "")
            # packages are left out: ``from raytrace.jit import helper`` binds ``raytrace``,
            # whose attributes are whichever submodules happen to be imported yet
            if (target is not None and is_ours(target) and target.__name__ not in seen
                    and not hasattr(target, "__path__")):
                todo.append(target)
    return seen


def _own_digest(module):
    """The digest of one module's own contents (memoised per module object)."""
    found = _modules.get(module.__name__)
    if found is not None and found[0] is module:
        return found[1]
    h = hashlib.sha256()
    for name, value in sorted(vars(module).items(), key=lambda kv: kv[0]):
        if (name.startswith("__") or not name.isidentifier() or isinstance(value, types.ModuleType)
                or (not name.isupper() and not _is_code(value))):
            # values: the constants (UPPER_CASE) only, never run-time state (a module's
            # ``_pools = {}`` fills with thread pools after a render: a digest that saw it
            # would depend on what the process did before the kernel was looked up);
            # imported modules are not content (their code is in the closure when they are
            # ours); names that are not identifiers are tools' (pytest's assertion rewriter
            # adds ``@py_builtins`` to the modules of a package that provides a pytest plugin)
            continue
        h.update(f"{name}=".encode())
        _feed_member(h, value, module.__name__)
    digest = h.hexdigest()
    _modules[module.__name__] = (module, digest)
    return digest


# a class's attributes that are not its content: Python's own, and ``__slotnames__``, which
# ``copyreg`` adds to a class the first time one of its instances is pickled (a Numba type,
# when a signature is saved to the cache or sent to a worker: run-time state again)
_NOT_CLASS_CONTENT = ("__dict__", "__weakref__", "__doc__", "__module__", "__slotnames__")


def _is_code(value):
    """Whether a module member is code: a function, a jitted function, an intrinsic or a
    class (what a lower-case name may contribute to its module's digest)."""
    return (_is_dispatcher(value) or isinstance(value, type)
            or isinstance(getattr(value, "_defn", value), types.FunctionType))


def _feed_member(h, value, module_name):
    """A module member as part of its module's digest."""
    func = value.py_func if _is_dispatcher(value) else getattr(value, "_defn", value)
    if isinstance(func, types.FunctionType):
        if func.__module__ == module_name:
            _feed_code(h, func.__code__, set(), func.__doc__)
        else:
            h.update(f"ref {func.__module__}.{func.__qualname__};".encode())
        return
    if isinstance(value, type):
        if value.__module__ != module_name:
            h.update(f"ref {value.__module__}.{value.__qualname__};".encode())
            return
        h.update(f"class {value.__qualname__}{[b.__qualname__ for b in value.__mro__]!r}".encode())
        for attr, member in sorted(vars(value).items(), key=lambda kv: kv[0]):
            if attr not in _NOT_CLASS_CONTENT:
                h.update(f".{attr}=".encode())
                _feed_member(h, getattr(member, "__func__", member), module_name)
        return
    simple = _simple(value)
    if simple is not None:
        h.update(simple)
    elif isinstance(value, types.ModuleType):
        h.update(f"module {value.__name__};".encode())
    else:
        h.update(f"obj {type(value).__module__}.{type(value).__qualname__};".encode())


def code_digest(py_func):
    """A digest of the function's own code only (not what it refers to): what changes
    when *this* function is edited (comments and docstrings aside)."""
    h = hashlib.sha256()
    _feed_code(h, py_func.__code__, set(), py_func.__doc__)
    return h.hexdigest()[:16]


def code_names(py_func):
    """The global and attribute names ``py_func``'s code reads (nested code included)."""
    names = set()
    _feed_code(hashlib.sha256(), py_func.__code__, names, py_func.__doc__)
    return names


def callees(py_func):
    """The jitted functions ``py_func`` refers to directly (globals it names, attributes
    of package modules it names, closure cells), in name order."""
    names = code_names(py_func)
    scope, found = py_func.__globals__, {}

    def visit(value, depth=0):
        if _is_dispatcher(value):
            found.setdefault(id(value), value)
        elif isinstance(value, types.ModuleType) and is_ours(value) and depth == 0:
            for name in names:
                if name in vars(value):
                    visit(vars(value)[name], 1)

    for name in sorted(names):
        if name in scope:
            visit(scope[name])
    for cell in py_func.__closure__ or ():
        try:
            visit(cell.cell_contents)
        except ValueError:
            pass
    return sorted(found.values(), key=lambda d: (d.py_func.__module__, d.py_func.__qualname__))
