"""raytrace's kernel cache: one file per compiled kernel, named by what it holds.

Each of raytrace's dispatchers gets a :class:`KernelCache` of its own (``roles`` sets it
on the dispatcher as it is declared); nothing of Numba's is replaced or reconfigured, so
the host program's own ``@njit(cache=True)`` functions cache, and target, exactly as they
would without raytrace.

A compiled kernel is the file ::

    <store>/<folder in the package>/<module>.<function>.<key>.<cpu>.<types>.nbk

- ``key``: the kernel's **dependency key** (``raytrace.jit.keys``: its own code and its
  callees', in any file, with the versions and mode switches): an edit gets a new name,
  so a stale kernel is never found; a comment or docstring changes nothing; undoing an
  edit finds the file compiled before it;
- ``cpu``: the code generator's target (triple, CPU name, features): kernels compiled
  here are for this processor; the shipped ones (``raytrace.jit.bundle``) for the
  portable ``x86-64-v3`` level, accepted where the processor has every feature of it;
- ``types``: the argument types.

The file holds its full key next to Numba's serialised compile result and is loaded only
when that key matches. Files are written whole (a temporary file, then a rename), never
changed afterwards, and there is no index to read, modify and write back: two processes
compiling the same kernel write the same name, the last rename wins, and a reader sees
one complete file or none; a process killed mid-write leaves only a ``.tmp-`` file.
Folders are private and checked before use (``raytrace.jit.folders``). Per function,
the files of the :data:`MAX_KEYS` most recently used keys are kept.

The folder within the package (``kernels``, ``accel``, ``_``), not the absolute path, is
part of the name, so a copy of the package (a student's edited checkout, the tests'
copies) shares every kernel it has not changed.

Fence. Saving and loading use ``CompileResult._reduce`` / ``_rebuild``,
``numba.core.serialize.dumps`` and the dispatcher's ``_cache`` attribute (what
``Dispatcher.compile`` calls ``load_overload`` / ``save_overload`` on): Numba internals,
used as Numba's own cache uses them, checked by ``tests/test_jit_cache.py`` on every
Numba the package allows. Where no private folder can be had, or with
``RAYTRACE_DISK_CACHE=0``, kernels are compiled in memory only, and the first compile
says so once, with the reason.
"""
import contextlib
import functools
import glob
import hashlib
import inspect
import os
import pathlib
import pickle
import sys
import time
import warnings

from . import folders, keys, modes

FORMAT = "raytrace kernel file 2"
MAX_KEYS = 8                 # compiled versions (dependency keys) kept per function
PORTABLE_CPU = "x86-64-v3"
# what x86-64-v3 adds to x86-64 (LLVM's names; the host must have each one)
PORTABLE_FEATURES = ("avx", "avx2", "bmi", "bmi2", "cx16", "f16c", "fma", "lzcnt", "movbe",
                     "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3", "xsave")
PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]

_state = {"store": None, "reason": None, "opened": False, "warned": False}


def store():
    """The folder of this process's compiled kernels (``<base>/kernels-<mode>``), or None
    (see :func:`reason`)."""
    if not _state["opened"]:
        _state["opened"] = True
        if not modes.switch_on("RAYTRACE_DISK_CACHE"):
            _state["reason"] = "RAYTRACE_DISK_CACHE=0"
        else:
            base, why = folders.open_base()
            if base is None:
                _state["reason"] = f"no private cache folder ({why})"
            else:
                try:
                    _state["store"] = folders.subfolder(base, f"kernels-{modes.mode_tag()}")
                except OSError as exc:
                    _state["reason"] = str(exc)
    return _state["store"]


def reason():
    """Why kernels are not cached on disk (None when they are)."""
    store()
    return _state["reason"]


def _warn_memory_only():
    if not _state["warned"] and reason():
        _state["warned"] = True
        warnings.warn(f"raytrace: compiled kernels are kept in memory only: {reason()}",
                      RuntimeWarning, stacklevel=3)


def relative_folder(py_file):
    """The subfolder of kernels defined in ``py_file``: its folder within the loaded
    package (``kernels``, ``accel``; ``_`` for the top), or None outside it."""
    module = sys.modules.get("raytrace")
    root = pathlib.Path(os.path.abspath(module.__file__)).parent if module is not None else PACKAGE_DIR
    try:
        rel = pathlib.Path(os.path.abspath(py_file)).parent.relative_to(root)
    except ValueError:
        return None
    return "_".join(rel.parts) if rel.parts else "_"


@functools.cache
def host_has_portable_level():
    """Whether this processor runs code compiled for :data:`PORTABLE_CPU`."""
    import llvmlite.binding as ll
    if not ll.get_process_triple().startswith("x86_64"):
        return False
    host = ll.get_host_cpu_features()
    return all(host.get(feature, False) for feature in PORTABLE_FEATURES)


def portable_magic(codegen):
    """The code-generation key of the portable level on this triple."""
    return (codegen.magic_tuple()[0], PORTABLE_CPU, "")


def accepted_magics(codegen):
    """The code-generation keys whose kernels run here: this process's own, then the
    portable level's where the processor has it."""
    own = codegen.magic_tuple()
    out = [own]
    if own != portable_magic(codegen) and host_has_portable_level():
        out.append(portable_magic(codegen))
    return out


def _digest(text, n=16):
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def signature_text(sig):
    """The argument types as text, each with its class (a type's ``str`` can hide a
    difference: a borrowed array prints as a plain one, ``raytrace.kernels.borrow``)."""
    types = sig.args if hasattr(sig, "args") else (sig if isinstance(sig, tuple) else (sig,))
    return repr(tuple(f"{type(t).__module__}.{type(t).__qualname__}:{t}" for t in types))


def cachable(cres):
    """Whether a compile result can be written to disk (no lifted loops, no dynamic
    globals: Numba's own rule)."""
    return not any(not x.can_cache for x in cres.lifted) and not cres.library.has_dynamic_globals


class KernelCache:
    """The on-disk cache of one of raytrace's dispatchers (see the module docstring).
    ``Dispatcher.compile`` calls :meth:`load_overload` before compiling a signature and
    :meth:`save_overload` after."""

    def __init__(self, py_func):
        self._py_func = py_func
        self._name = f"{py_func.__module__.rsplit('.', 1)[-1]}.{py_func.__qualname__}"
        self._subfolder = relative_folder(inspect.getfile(py_func))
        self._folder = None          # this function's folder in the store, once made and checked

    # -- where ---------------------------------------------------------------------------
    @property
    def cache_path(self):
        folder = self.folder()
        return str(folder) if folder is not None else "<memory>"

    def folder(self):
        """This function's folder in the store (created private), or None."""
        if self._folder is None:
            root = store()
            if root is None or self._subfolder is None:
                return None
            try:
                self._folder = folders.subfolder(root, self._subfolder)
            except OSError:
                return None
        return self._folder

    def _folders(self):
        """Where to look: the store, then the shipped kernels (``raytrace.jit.bundle``)."""
        from . import bundle
        out = [self.folder()]
        shipped = bundle.folder()
        if shipped is not None and self._subfolder is not None:
            out.append(shipped / self._subfolder)
        return [f for f in out if f is not None]

    def dependency_key(self):
        """This function's key (:func:`raytrace.jit.keys.function_key`)."""
        return keys.function_key(self._py_func)

    def file_name(self, dep, magic, sig):
        return f"{self._name}.{dep[:16]}.{_digest(repr(magic), 8)}.{_digest(signature_text(sig))}.nbk"

    def key_text(self, dep, magic, sig):
        """The full key a file holds and is checked against when loaded."""
        return repr((FORMAT, self._name, dep, magic, signature_text(sig)))

    # -- Numba's interface ---------------------------------------------------------------
    def load_overload(self, sig, target_context):
        """The cached compile result for ``sig``, or None."""
        places = self._folders()
        if not places:
            return None
        from numba.core import compiler
        target_context.refresh()
        codegen = target_context.codegen()
        dep = self.dependency_key()
        for magic in accepted_magics(codegen):
            name = self.file_name(dep, magic, sig)
            for place in places:
                path = place / name
                try:
                    stored_key, payload, *late_calls = pickle.loads(path.read_bytes())
                except FileNotFoundError:
                    continue
                except Exception:       # noqa: BLE001 - torn, foreign or naming types we lack
                    continue
                if stored_key != self.key_text(dep, magic, sig):
                    continue
                bound = _bind_late(late_calls[0]) if late_calls else ()
                if bound is None:
                    continue
                try:
                    cres = compiler.CompileResult._rebuild(target_context, *payload)
                except Exception:       # noqa: BLE001 - compile instead
                    continue
                if bound:
                    from . import late
                    late.remember(cres.library, bound)
                with contextlib.suppress(OSError):
                    if place == places[0]:
                        os.utime(path)      # recently used: kept when old keys are pruned
                return cres
        return None

    def save_overload(self, sig, cres):
        """Write ``cres`` (compiled for ``sig``) as one whole file; record what it is made
        of (``raytrace.jit.plan.record``); prune old keys."""
        folder = self.folder()
        if folder is None:
            _warn_memory_only()
            return
        if not cachable(cres):
            return
        from numba.core.serialize import dumps
        dep = self.dependency_key()
        magic = cres.library.codegen.magic_tuple()
        from . import late
        late_calls = late.needed(cres.library)
        record = (self.key_text(dep, magic, sig), cres._reduce()) + ((late_calls,) if late_calls else ())
        data = dumps(record)
        try:
            folders.write_whole(folder / self.file_name(dep, magic, sig), data)
            from . import plan
            plan.record(self._py_func, self)
            self.prune(folder)
        except OSError:
            pass

    def flush(self):
        """Numba calls this on ``recompile``: files are never stale, nothing to drop."""

    # -- queries -------------------------------------------------------------------------
    def has_key(self, dep=None):
        """Whether some signature is cached under dependency key ``dep`` (default: the
        current one) for a code generator whose kernels run here."""
        from numba.core.registry import cpu_target
        dep = (dep or self.dependency_key())[:16]
        magics = {_digest(repr(m), 8) for m in accepted_magics(cpu_target.target_context.codegen())}
        for place in self._folders():
            for path in place.glob(f"{glob.escape(self._name)}.{dep}.*.nbk"):
                if path.name.split(".")[-3] in magics:
                    return True
        return False

    def has_signature(self, sig):
        """Whether ``sig`` is cached under the current dependency key for a code generator
        whose kernels run here (a file name only: nothing is read)."""
        from numba.core.registry import cpu_target
        dep = self.dependency_key()
        for magic in accepted_magics(cpu_target.target_context.codegen()):
            name = self.file_name(dep, magic, sig)
            if any((place / name).is_file() for place in self._folders()):
                return True
        return False

    def records(self):
        """The paths of this function's code records (``raytrace.jit.plan``)."""
        return [p for place in self._folders() for p in place.glob(f"{glob.escape(self._name)}.*.code.json")]

    def record_path(self, dep=None):
        folder = self.folder()
        return None if folder is None else folder / f"{self._name}.{(dep or self.dependency_key())[:16]}.code.json"

    def prune(self, folder):
        """Remove this function's files of all but the :data:`MAX_KEYS` most recently used
        keys (and temporary files older than an hour)."""
        newest = {}
        for path in folder.glob(f"{glob.escape(self._name)}.*"):
            rest = path.name[len(self._name) + 1:].split(".")
            if len(rest) < 2 or len(rest[0]) != 16:
                continue
            with contextlib.suppress(OSError):
                newest[rest[0]] = max(newest.get(rest[0], 0), path.stat().st_mtime_ns)
        for dep in sorted(newest, key=newest.get)[:-MAX_KEYS]:
            for path in folder.glob(f"{glob.escape(self._name)}.{dep}.*"):
                with contextlib.suppress(OSError):
                    path.unlink()
        for tmp in folder.glob(".tmp-*"):
            with contextlib.suppress(OSError):
                if time.time() - tmp.stat().st_mtime > 3600:
                    tmp.unlink()


def _bind_late(calls):
    """Bind what a late twin calls before its code is loaded (``raytrace.jit.late``);
    -> the symbols, or None when that cannot be done (the file is then not used)."""
    from . import late
    try:
        return late.bind_all(calls)
    except Exception:       # noqa: BLE001 - a kernel that no longer compiles: compile the twin
        return None


def dispatcher_cache(dispatcher):
    """The :class:`KernelCache` of a dispatcher, or None (not one of raytrace's)."""
    cache = getattr(dispatcher, "_cache", None)
    return cache if isinstance(cache, KernelCache) else None


def attach(dispatcher):
    """Give one of raytrace's dispatchers its :class:`KernelCache` (only that dispatcher:
    nothing global changes)."""
    dispatcher._cache = KernelCache(dispatcher.py_func)
    return dispatcher
