"""Keep Numba's on-disk cache in step with the whole package's source.

Numba invalidates a cached kernel only when *its own* file changes; a kernel that inlines
a function from another file (the BVH traversal, the intersection routines) would keep
running the old code after that file changed. So the cache lives in a folder named after
a hash of every ``.py`` file of the package: any edit starts a fresh folder.

The base folder is ``$NUMBA_CACHE_DIR`` when set, else ``~/.cache/raytrace-numba``.
Older hash folders beyond the newest few are removed.
"""
import hashlib
import os
import pathlib
import shutil

KEEP = 3


def source_hash(package_dir):
    h = hashlib.sha1()
    for path in sorted(pathlib.Path(package_dir).rglob("*.py")):
        h.update(str(path.relative_to(package_dir)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def configure(package_dir):
    """Point numba's cache at ``<base>/<source hash>``; call before any @njit(cache=True)."""
    import numba

    base = os.environ.get("NUMBA_CACHE_DIR") or str(pathlib.Path.home() / ".cache" / "raytrace-numba")
    folder = pathlib.Path(base) / f"raytrace-{source_hash(package_dir)}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)
        old = sorted(pathlib.Path(base).glob("raytrace-*"), key=lambda p: p.stat().st_mtime)[:-KEEP]
        for stale in old:
            shutil.rmtree(stale, ignore_errors=True)
    except OSError:
        return                       # read-only home: numba falls back to its defaults
    numba.config.CACHE_DIR = str(folder)
