"""Numba's on-disk cache in folders named after the source they were compiled from.

Numba invalidates a cached kernel only when *its own* file changes (path, size and
modification time); a kernel that inlines a function or bakes in a constant from another
file keeps running the old code after that file changes, and a package upgraded in place
can meet the cache of its previous version. Here each package's kernels get a folder
``<base>/<name>-<source hash>[-<tag>]``: any edit of a hashed file starts a fresh folder;
the newest few folders of a package are kept, older ones removed.

Kernels are compiled for a named, portable CPU level (:func:`use_portable_cpu`:
``x86-64-v3``, i.e. AVX2 and FMA) rather than for this exact processor, when the processor
has that level: the compiled code, and Numba's cache key for it, are then the same on
every such machine, which lets the packages ship kernels compiled ahead of time
(``userio/prebuilt.py``). Measured on the path tracer and the Whitted kernel, the level
is as fast as compiling for the host (``docs/architecture.md``).

The base folder is ``$NUMBA_CACHE_DIR`` when set, else ``~/.cache/raytrace-numba`` (a
per-user folder in the temporary directory when that is not writable).

Numba chooses a kernel's cache folder when the kernel is *decorated* (its module
imported), from ``numba.config.CACHE_DIR``: :func:`kernel_cache` sets that for the imports
of one package and restores it afterwards, so packages imported one after the other each
keep their own folder. ``raytrace`` (which adds switches to the name) uses the same pieces
through ``raytrace/_numba_cache.py``.
"""
import contextlib
import hashlib
import os
import pathlib
import re
import shutil
import tempfile
import warnings

KEEP = 3
PORTABLE_CPU = "x86-64-v3"
# what x86-64-v3 adds to x86-64 (LLVM's names; the host must have each one)
PORTABLE_FEATURES = ("avx", "avx2", "bmi", "bmi2", "cx16", "f16c", "fma", "lzcnt", "movbe",
                     "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3", "xsave")
_OFF = ("0", "off", "false", "no")
_ON = ("", "1", "on", "true", "yes")


def switch_on(name):
    """Whether the environment switch ``name`` (``RAYTRACE_SIMD``, ``RAYTRACE_BORROW``,
    ``RAYTRACE_FAST_INLINE``, ``RAYTRACE_PREBUILT``, ``RAYTRACE_PORTABLE_CPU``) is on (the
    default). An unrecognised value warns and counts as on."""
    value = os.environ.get(name, "").strip().lower()
    if value in _OFF:
        return False
    if value not in _ON:
        warnings.warn(f"{name}={os.environ[name]!r} not understood (use 0 or 1); using 1",
                      RuntimeWarning, stacklevel=2)
    return True


def codegen_started():
    """Whether Numba's CPU code generator exists already (the first ``@njit`` decoration of
    the process creates it, with the CPU name and features it will use for good)."""
    from numba.core.registry import cpu_target
    return "_toplevel_target_context" in vars(cpu_target)


def use_portable_cpu():
    """Make Numba compile for :data:`PORTABLE_CPU` instead of the host's exact processor,
    when all of these hold: the host is x86-64 and has every feature of that level; neither
    ``NUMBA_CPU_NAME`` nor ``NUMBA_CPU_FEATURES`` is set (the user's choice wins);
    ``RAYTRACE_PORTABLE_CPU`` is not ``0``; and no kernel has been decorated yet in this
    process (Numba fixes its target when the first one is). Process-wide: ``@njit``
    functions of the caller's own then compile for that level too.

    Returns whether Numba compiles for the portable level."""
    import numba
    import llvmlite.binding as ll

    if (numba.config.CPU_NAME, numba.config.CPU_FEATURES) == (PORTABLE_CPU, ""):
        return True
    if (numba.config.CPU_NAME is not None or numba.config.CPU_FEATURES is not None
            or not switch_on("RAYTRACE_PORTABLE_CPU") or codegen_started()
            or not ll.get_process_triple().startswith("x86_64")):
        return False
    host = ll.get_host_cpu_features()
    if not all(host.get(feature, False) for feature in PORTABLE_FEATURES):
        return False
    numba.config.CPU_NAME, numba.config.CPU_FEATURES = PORTABLE_CPU, ""
    return True


_IMPORTS_NUMBA = re.compile(rb"^[ \t]*(?:import|from)[ \t]+numba\b", re.MULTILINE)


def source_hash(package_dir, only_numba_files=False, also=()):
    """A hash (16 hex digits) of the package's ``.py`` files: all of them, or with
    ``only_numba_files`` those that import Numba (an ``import numba`` or ``from numba``
    statement, at any indentation) and those named in ``also``
    (paths relative to ``package_dir``: for a package whose kernels are known to read code
    and constants only from such files)."""
    h = hashlib.sha1()
    root = pathlib.Path(package_dir)
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        if only_numba_files and not _IMPORTS_NUMBA.search(data) and path.relative_to(root).as_posix() not in also:
            continue
        h.update(str(path.relative_to(package_dir)).encode())
        h.update(data)
    return h.hexdigest()[:16]


def package_subfolder(package_dir, py_file):
    """The cache subfolder, named after its folder *within the package*, of kernels defined
    in ``py_file`` (``kernels``, ``accel``; ``_`` for the package's top folder; nested
    folders joined by ``_``), or None when the file is not inside ``package_dir``. Used by
    caches whose entries are keyed by content (``raytrace/compile/cache.py``), so that a
    copy of the package elsewhere finds them; Numba's own cache names the subfolder after
    the folder's absolute path instead."""
    path = pathlib.Path(os.path.abspath(py_file))
    try:
        rel = path.parent.relative_to(pathlib.Path(os.path.abspath(package_dir)))
    except ValueError:
        return None
    return "_".join(rel.parts) if rel.parts else "_"


def default_bases():
    """Where caches may live: ``$NUMBA_CACHE_DIR`` or ``~/.cache/raytrace-numba``, then a
    per-user folder under the temporary directory (read-only home)."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return [os.environ.get("NUMBA_CACHE_DIR")
            or str(pathlib.Path.home() / ".cache" / "raytrace-numba"),
            str(pathlib.Path(tempfile.gettempdir()) / f"raytrace-numba-{user}")]


def folder_name(name, digest, tag=""):
    """A package's cache folder name, ``<name>-<digest>[-<tag>]``."""
    return f"{name}-{digest}" + (f"-{tag}" if tag else "")


def make_folder(name, digest, tag=""):
    """Create (or touch) ``<base>/<name>-<digest>[-<tag>]`` in the first writable base,
    remove the package's older folders beyond the newest KEEP; the folder, or None when
    no base is writable."""
    leaf = folder_name(name, digest, tag)
    for base in default_bases():
        folder = pathlib.Path(base) / leaf
        try:
            folder.mkdir(parents=True, exist_ok=True)
            os.utime(folder)
            old = sorted(pathlib.Path(base).glob(f"{name}-*"), key=lambda p: p.stat().st_mtime)[:-KEEP]
            for stale in old:
                shutil.rmtree(stale, ignore_errors=True)
        except OSError:
            continue
        return folder
    return None


_OPENED = {}   # (package_dir, name, digest, tag) -> folder: each package set up once a process


def open_folder(package_dir, name, digest, tag=""):
    """Set a package's kernels up before the first is decorated: the portable CPU level
    (:func:`use_portable_cpu`), ``numba.config.CACHE_DIR`` pointed at its folder
    (:func:`make_folder`), the kernels shipped in ``<package_dir>/prebuilt/`` copied in
    when they fit (``userio.prebuilt.seed``). Returns the folder (None when no base is
    writable)."""
    import numba

    from . import prebuilt

    key = (str(package_dir), name, digest, tag)
    first = key not in _OPENED
    if first:
        use_portable_cpu()
        _OPENED[key] = make_folder(name, digest, tag)
    folder = _OPENED[key]
    if folder is not None:
        numba.config.CACHE_DIR = str(folder)
    if first:
        # after CACHE_DIR is set: reading the bundle's index files unpickles references that
        # import the package's kernel modules, whose kernels must land in this folder
        prebuilt.seed(folder, package_dir)
    return folder


@contextlib.contextmanager
def kernel_cache(name, package_dir):
    """Within the block, ``@njit(cache=True)`` kernels that get decorated (modules that
    get imported) cache into ``<base>/<name>-<hash of every .py file of package_dir>``;
    ``numba.config.CACHE_DIR`` is restored afterwards. Yields the folder (None: Numba's
    own default places, when no base is writable)."""
    import numba

    old = numba.config.CACHE_DIR
    folder = open_folder(package_dir, name, source_hash(package_dir))
    try:
        yield folder
    finally:
        numba.config.CACHE_DIR = old


class KernelCacheScope:
    """:func:`kernel_cache` for the body of one kernel module, whose kernels are decorated
    at module level (a ``with`` block cannot span them)::

        _cache = KernelCacheScope("curves", pathlib.Path(__file__).parent)   # before any @njit
        ...
        _cache.close()                                                        # at the end

    so a library's kernels land in its own folder however the module is first imported
    (the package's ``__init__`` imports nothing heavy: ``--help`` stays light).
    ``numba.config.CACHE_DIR`` is restored by :meth:`close`."""

    def __init__(self, name, package_dir):
        import numba

        self._old = numba.config.CACHE_DIR
        self.folder = open_folder(package_dir, name, source_hash(package_dir))

    def close(self):
        import numba

        numba.config.CACHE_DIR = self._old
