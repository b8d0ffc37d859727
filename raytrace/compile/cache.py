"""Numba's on-disk cache, with each kernel looked up by its dependency key (:mod:`.keys`).

Numba's own cache finds a compiled kernel by its source file's stamp and its line
number, so an edit anywhere in a file drops every kernel of that file, a comment above a
kernel moves it to a new cache entry, and an edited callee in *another* file is not seen
at all (the stale kernel would be loaded). The ``raytrace`` package used to avoid the last
by naming its whole cache folder after a hash of all its kernel sources: correct, but any
edit, a comment included, recompiled everything (45-50 s).

:func:`install` makes every kernel of the package use :class:`DependencyCache` instead:

- the index entry of a compiled kernel is keyed by (signature, target, **dependency
  key**): an edit recompiles exactly the kernels whose key it changed (the edited
  function and the kernels that call it, in any file); comments, docstrings and blank
  lines change no key, so they compile nothing;
- each key has an index file of its own, named after the function and the key (no
  line number), and the newest :data:`MAX_ENTRIES` keys of a function are kept: undoing
  an edit finds the kernel compiled before it, bit for bit the same code, without
  compiling;
- the files are kept in a subfolder named after the source file's folder *within the
  package* (``kernels``, ``accel``, ``_``): a copy of the package elsewhere (a student's
  edited checkout, the tests' copies) shares the compiled kernels it has not changed;
- a data file is named after its index key, so two processes compiling different
  versions of one kernel at once never write the same file, and an index that names a
  type this checkout does not have (another version's) is skipped, not an error.

Functions outside the package (users' own ``@njit`` code, the libraries) keep Numba's
cache unchanged.

Fence. This replaces ``numba.core.dispatcher.FunctionCache`` (what
``Dispatcher.enable_caching`` instantiates) and builds on ``numba.core.caching``'s
``FunctionCache``, ``CompileResultCacheImpl``, ``IndexDataCacheFile`` and
``_CacheLocator``: Numba internals. It is applied only when the source of the pieces it
relies on hashes to a value checked here (:data:`KNOWN_SOURCES`); otherwise (or with
``RAYTRACE_DEPENDENCY_CACHE=0``) :func:`install` returns False with the reason, and
``raytrace._numba_cache`` falls back to one cache folder per hash of every kernel source
(never stale, but any edit recompiles everything). ``tests/test_compile_cache.py`` fails
when it is not applied, when an edited callee two files away leaves a stale kernel (with
a negative control: Numba's own cache does leave it stale), when a comment compiles
anything, and when an undo does not give the original image bit for bit.
"""
import contextlib
import glob
import hashlib
import inspect
import os
import pathlib
import pickle
import sys

from userio.numba_cache import switch_on

from . import keys

MAX_ENTRIES = 8                               # compiled versions kept per kernel and index
STAMP = b"raytrace dependency-keyed cache 1"  # every index's source stamp (bytes: see userio.prebuilt)
# sha256 (first 16 hex) of the Numba sources this module relies on (see numba_source_digest)
KNOWN_SOURCES = {
    "5dd7170463ff448f": "0.68",
}

_state = {"installed": False, "reason": None}
_ORIGINAL = {}
PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]


def numba_source_digest():
    """The digest of the Numba code this module relies on (see :data:`KNOWN_SOURCES`)."""
    from numba.core import caching, dispatcher

    parts = [inspect.getsource(dispatcher.Dispatcher.enable_caching),
             inspect.getsource(caching.Cache),
             inspect.getsource(caching.IndexDataCacheFile),
             inspect.getsource(caching.CacheImpl.get_filename_base),
             inspect.getsource(caching._CacheLocator)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def status():
    """``(installed, reason)``: whether kernels are cached by dependency key, why not if not."""
    return _state["installed"], _state["reason"]


def relative_folder(py_file):
    """The cache subfolder of kernels defined in ``py_file``: its folder within the package
    (``kernels``, ``accel``; ``_`` for the package's top), or None outside the package
    (``userio.numba_cache.package_subfolder``)."""
    from userio.numba_cache import package_subfolder
    for root in _package_roots():
        folder = package_subfolder(root, py_file)
        if folder is not None:
            return folder
    return None


def _package_roots():
    """The folders of the loaded package (one; a copy imported as ``raytrace`` has its own)."""
    module = sys.modules.get("raytrace")
    roots = [pathlib.Path(os.path.abspath(module.__file__)).parent] if module is not None else []
    return roots or [PACKAGE_DIR]


def _classes():
    """The cache classes (built on first use: they subclass Numba's)."""
    if "classes" in _ORIGINAL:
        return _ORIGINAL["classes"]
    from numba.core import caching, config

    class Locator(caching._CacheLocator):
        """Files in ``<CACHE_DIR>/<folder within the package>``; one constant stamp."""

        def __init__(self, py_func, py_file, folder):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(config.CACHE_DIR, folder)

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return STAMP

        def get_disambiguator(self):
            return "k"

        @classmethod
        def from_function(cls, py_func, py_file):
            folder = relative_folder(py_file)
            if not config.CACHE_DIR or folder is None:
                return None
            self = cls(py_func, py_file, folder)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    class Impl(caching.CompileResultCacheImpl):
        """Numba's compile-result serialisation with :class:`Locator` (file names without
        a line number: ``path.trace_path-k.py311.nbi``)."""

        def __init__(self, py_func):
            self._lineno = py_func.__code__.co_firstlineno
            source_path = inspect.getfile(py_func)
            self._locator = Locator.from_function(py_func, source_path)
            if self._locator is None:
                raise RuntimeError(f"no dependency-keyed cache for {py_func.__qualname__}")
            modname = os.path.splitext(os.path.basename(source_path))[0]
            fullname = f"{modname}.{py_func.__qualname__}"
            self._filename_base = self.get_filename_base(fullname, getattr(sys, "abiflags", ""))

    class IndexFile(caching.IndexDataCacheFile):
        """One index file per dependency key (``path.path_rows-k.py311.<key>.nbi``), each
        data file named after its index key: versions of a kernel (an edit, its undo,
        another checkout sharing the cache) never write each other's files. An index
        that cannot be read (another Numba, a type this checkout does not have) counts as
        empty. The :data:`MAX_ENTRIES` most recently used keys of a function are kept."""

        def _base(self):
            return self._index_name[:-4]

        def _index_for(self, dep):
            return os.path.join(self._cache_path, f"{self._base()}.{dep[:16]}.nbi")

        def _read(self, path):
            try:
                with open(path, "rb") as f:
                    version = pickle.load(f)
                    if version != self._version:
                        return {}
                    stamp, overloads = pickle.loads(f.read())
            except Exception:          # missing, torn, or naming types this code lacks
                return {}
            return overloads if stamp == self._source_stamp and isinstance(overloads, dict) else {}

        def _write(self, path, overloads):
            data = self._dump((self._source_stamp, overloads))
            with self._open_for_write(path) as f:
                pickle.dump(self._version, f, protocol=-1)
                f.write(data)

        def has(self, dep):
            """Whether some signature is cached under dependency key ``dep``."""
            return bool(self._read(self._index_for(dep)))

        def load(self, key):
            path = self._index_for(key[-1][1])
            name = self._read(path).get(key)
            if name is None:
                return None
            try:
                data = self._load_data(name)
            except Exception:          # removed meanwhile, or unreadable: compile again
                return None
            with contextlib.suppress(OSError):
                os.utime(path)         # recently used: kept when the function's keys are pruned
            return data

        def save(self, key, data):
            path = self._index_for(key[-1][1])
            overloads = self._read(path)
            name = f"{self._base()}.{_key_digest(key)}.nbc"
            self._save_data(name, data)
            overloads[key] = name
            self._write(path, overloads)
            self._prune()

        def flush(self):
            pass

        def _prune(self):
            """Remove the index and data files of all but the most recently used keys."""
            indexes = glob.glob(os.path.join(glob.escape(self._cache_path), glob.escape(self._base()) + ".*.nbi"))
            for index in _oldest_files(indexes, MAX_ENTRIES):
                for name in self._read(index).values():
                    with contextlib.suppress(OSError):
                        os.unlink(self._data_path(name))
                with contextlib.suppress(OSError):
                    os.unlink(index)

    class DependencyCache(caching.FunctionCache):
        """Numba's per-function cache, looked up by the function's dependency key."""

        def __init__(self, py_func):
            self._name = repr(py_func)
            self._py_func = py_func
            self._impl = Impl(py_func)
            self._cache_path = self._impl.locator.get_cache_path()
            self._cache_file = IndexFile(cache_path=self._cache_path,
                                         filename_base=self._impl.filename_base,
                                         source_stamp=STAMP)
            self.enable()

        def _index_key(self, sig, codegen):
            return (sig, codegen.magic_tuple(), ("dependency key", keys.function_key(self._py_func)))

        def save_overload(self, sig, data):
            super().save_overload(sig, data)
            from . import plan
            plan.record(self._py_func, self)

        def dependency_key(self):
            """This function's key (:func:`raytrace.compile.keys.function_key`)."""
            return keys.function_key(self._py_func)

        def has_key(self, key=None):
            """Whether some signature of this function is cached under ``key`` (default:
            the current one), without loading it."""
            return self._cache_file.has(key or self.dependency_key())

    _ORIGINAL["classes"] = (Locator, Impl, IndexFile, DependencyCache)
    return _ORIGINAL["classes"]


def _key_digest(key):
    """16 hex digits naming an index key's data file. Types are written with their class
    and ``str`` (their ``repr`` can hide a difference: a borrowed array's repr is a plain
    array's, ``raytrace.kernels.borrow``)."""
    sig, rest = key[0], key[1:]
    types = sig if isinstance(sig, tuple) else (sig,)
    text = repr((tuple(f"{type(t).__module__}.{type(t).__qualname__}:{t}" for t in types), rest))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _oldest_files(paths, keep):
    """The paths beyond the ``keep`` most recently used (modification times)."""
    if len(paths) <= keep:
        return []

    def used(path):
        try:
            return os.stat(path).st_mtime_ns
        except OSError:
            return -1
    return sorted(paths, key=used)[:len(paths) - keep]


def make_cache(py_func):
    """The cache a dispatcher of ``py_func`` uses: :class:`DependencyCache` for this
    package's functions (where a cache folder is set), Numba's own for the others."""
    from numba.core import config

    if keys.is_ours(py_func) and config.CACHE_DIR:
        try:
            return _classes()[3](py_func)
        except RuntimeError:            # not under the package's folder: not cached
            from numba.core.caching import NullCache
            return NullCache()
    return _ORIGINAL["FunctionCache"](py_func)


def dispatcher_cache(dispatcher):
    """The :class:`DependencyCache` of a dispatcher, or None (Numba's own, or none)."""
    cache = getattr(dispatcher, "_cache", None)
    return cache if "classes" in _ORIGINAL and isinstance(cache, _ORIGINAL["classes"][3]) else None


def install():
    """Make this package's kernels use :class:`DependencyCache` (once per process, before
    any kernel is decorated); returns :func:`status`."""
    if _state["installed"] or _state["reason"] is not None:
        return status()
    if not switch_on("RAYTRACE_DEPENDENCY_CACHE"):
        _state["reason"] = "RAYTRACE_DEPENDENCY_CACHE=0"
        return status()
    try:
        from numba.core import dispatcher
        digest = numba_source_digest()
        if digest not in KNOWN_SOURCES:
            _state["reason"] = f"Numba's cache differs from the versions checked (source digest {digest})"
        else:
            _classes()
    except Exception as exc:  # noqa: BLE001 - any failure: Numba's own cache, keyed folders
        _state["reason"] = f"cannot set up the dependency-keyed cache ({type(exc).__name__}: {exc})"
    if _state["reason"] is not None:
        return status()
    _ORIGINAL["FunctionCache"] = dispatcher.FunctionCache
    dispatcher.FunctionCache = make_cache
    _state["installed"] = True
    return status()
