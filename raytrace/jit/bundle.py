"""Kernels compiled ahead of time and shipped with the package: a first render loads them.

``raytrace/prebuilt/`` holds ``kernels.tar.xz``, the cache files (``raytrace.jit.cache``)
of the kernels the shipped scenes and the warm-up use, compiled for the portable CPU level
``x86-64-v3`` by ``python scripts/prebuild_kernels.py``, and ``manifest.json``: the
versions they were compiled with (Numba, llvmlite, NumPy, the Python cache tag), the
mode switches (``raytrace.jit.modes``) and the key recipe's version.

Each file is named by its kernel's dependency key, so after an edit the bundle still
serves every kernel the edit did not touch and never one it did; the code-generation
key in the name says the level, which :func:`raytrace.jit.cache.accepted_magics`
accepts only on a processor that has every feature of it. :func:`folder` unpacks the
archive once into a private folder beside the cache (``<base>/shipped-<archive
digest>``, each file written whole, a marker last) and the cache looks there after its
own folder. Nothing is unpacked when the manifest does not match this process
(another Numba or Python, other switches, ``RAYTRACE_PREBUILT=0``) or the processor
lacks the level: kernels then compile on first use, and :func:`reason` says why.
``tests/test_prebuilt.py`` checks that the bundle is current at a release, that a render
with it compiles nothing and gives the compiled image, and that it is not used where it
does not fit.
"""
import hashlib
import io
import json
import pathlib
import shutil
import tarfile

from . import cache, folders, keys, modes

MANIFEST = "manifest.json"
ARCHIVE = "kernels.tar.xz"
SHIPPED = pathlib.Path(__file__).resolve().parents[1] / "prebuilt"
MARKER = ".complete"

_state = {"opened": False, "folder": None, "reason": None}


def current_key():
    """What a bundle must have been compiled with to serve this process (a dict)."""
    import sys

    import llvmlite
    import numba
    import numpy
    return {"key version": keys.KEY_VERSION, "numba": numba.__version__,
            "llvmlite": llvmlite.__version__, "numpy": numpy.__version__,
            "python": sys.implementation.cache_tag, "mode": modes.mode_tag(),
            "cpu": cache.PORTABLE_CPU}


def why_not(manifest):
    """None when a bundle with ``manifest`` (a dict) serves this process, else why not."""
    if not modes.switch_on("RAYTRACE_PREBUILT"):
        return "RAYTRACE_PREBUILT=0"
    here = current_key()
    for field, value in here.items():
        if manifest.get("key", {}).get(field) != value:
            return f"shipped kernels made for {field} {manifest.get('key', {}).get(field)!r}, this is {value!r}"
    if not cache.host_has_portable_level():
        return f"this processor lacks a feature of {cache.PORTABLE_CPU}"
    return None


def folder(bundle_dir=SHIPPED):
    """The unpacked shipped kernels (a Path), or None (:func:`reason` says why)."""
    if not _state["opened"]:
        _state["opened"] = True
        try:
            _state["folder"] = _unpack(pathlib.Path(bundle_dir))
        except (OSError, ValueError, tarfile.TarError) as exc:
            _state["reason"] = f"shipped kernels not used ({type(exc).__name__}: {exc})"
    return _state["folder"]


def reason():
    """Why the shipped kernels are not used (None when they are)."""
    folder()
    return _state["reason"]


def _unpack(bundle_dir):
    if not (bundle_dir / MANIFEST).exists():
        _state["reason"] = "no shipped kernels"
        return None
    manifest = json.loads((bundle_dir / MANIFEST).read_text())
    _state["reason"] = why_not(manifest)
    if _state["reason"] is not None:
        return None
    root = cache.store()
    if root is None:
        _state["reason"] = cache.reason()
        return None
    archive = bundle_dir / ARCHIVE
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    target = folders.subfolder(root.parent, f"shipped-{digest}")
    if (target / MARKER).exists():
        return target
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar.getmembers():
            parts = pathlib.PurePosixPath(member.name).parts
            if not member.isfile() or len(parts) != 2 or any(p in ("", ".", "..") for p in parts):
                raise ValueError(f"unexpected member {member.name!r}")
            sub = folders.subfolder(target, parts[0])
            folders.write_whole(sub / parts[1], tar.extractfile(member).read())
    folders.write_whole(target / MARKER, digest.encode())
    for old in root.parent.glob("shipped-*"):      # other package versions' bundles
        if old != target:
            shutil.rmtree(old, ignore_errors=True)
    return target


def files(store_folder):
    """{``<subfolder>/<file>``: path} of the kernel files and code records in a cache
    folder that were compiled for the portable level."""
    out = {}
    for path in sorted(pathlib.Path(store_folder).glob("*/*")):
        if path.name.endswith(".code.json") or path.suffix == ".nbk":
            out[f"{path.parent.name}/{path.name}"] = path
    return out


def shipped_names(bundle_dir=SHIPPED):
    """The member names of the shipped archive."""
    with tarfile.open(pathlib.Path(bundle_dir) / ARCHIVE, "r:xz") as tar:
        return sorted(m.name for m in tar.getmembers())


def make(store_folder, out_dir=SHIPPED):
    """Write ``kernels.tar.xz`` and ``manifest.json`` into ``out_dir`` from the kernels in
    ``store_folder`` (the ``kernels-<mode>`` folder of a process that compiled them for
    the portable level). Returns the manifest."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz", preset=9) as tar:
        for name, path in files(store_folder).items():
            data = path.read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    folders.write_whole(out_dir / ARCHIVE, buffer.getvalue())
    manifest = {"key": current_key(), "made_by": "python scripts/prebuild_kernels.py"}
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest
