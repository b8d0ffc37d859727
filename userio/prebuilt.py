"""Kernels compiled ahead of time and shipped with a package: a first render loads them.

A cold compile of a scene's kernels takes 20-40 s; loading them from Numba's cache takes
about one. A package's ``prebuilt/`` folder (``raytrace/prebuilt/``, ``particles/prebuilt/``,
...) holds the cache files of the kernels its shipped scenes use (``kernels.tar.xz``) and
what they were compiled from (``manifest.json``):

- the name of the package's cache folder (``userio.numba_cache``: the package, the hash
  of its source; for ``raytrace``, whose cache finds each kernel by its dependency key
  (``raytrace/compile/cache.py``), a key version and its mode switches instead of the
  source hash);
- the Numba and llvmlite versions and the Python cache tag (``cpython-311``);
- Numba's code-generation key (target triple, CPU name, CPU features), which is portable
  because kernels are compiled for a named CPU level (``userio.numba_cache.use_portable_cpu``).

When a package is imported, :func:`seed` copies the files into its cache folder when the
whole key equals this process's, and only index files that are not there yet (a kernel
compiled here is never replaced). Anything else (another Numba, a machine without the
CPU level, ``RAYTRACE_PREBUILT=0``; for the libraries an edited kernel) leaves the cache
alone: kernels then compile on first use, as they would without this module. In
``raytrace``'s bundle each entry is found by its kernel's dependency key, so after an
edit the bundle still serves every kernel the edit did not touch, and never one it did.
So shipped code is never stale or compiled for the wrong processor;
``tests/test_prebuilt.py`` checks both, and that a seeded render compiles nothing and
gives the same image as a compiled one.

Fence. Numba keeps a kernel's cache files in a subfolder named after the absolute path of
its source file's folder, and checks an index file against a stamp of that source file
(``numba/core/caching.py``: Numba 0.68 stamps the SHA-256 of the file's bytes, so a
fresh clone of the same source matches); the copies go to this checkout's subfolders, and
each index's stamp is checked against the file here before it is written. The index
format is Numba's private one: seeding is done only for the Numba releases in
:data:`KNOWN_NUMBA`, and any failure warns once and compiles instead.

After editing a kernel, ``python scripts/prebuild_kernels.py`` rebuilds the bundles
(``tests/test_prebuilt.py`` fails while one is stale).
"""
import hashlib
import io
import json
import os
import pathlib
import pickle
import pickletools
import sys
import tarfile
import warnings

from .numba_cache import switch_on

MANIFEST = "manifest.json"
ARCHIVE = "kernels.tar.xz"
KNOWN_NUMBA = ("0.68.",)   # index format (version pickle, then (sha256 stamp, overloads)) checked


def current_key(folder):
    """What this process compiles into the cache ``folder``: the folder's name (package,
    source hash, mode), Numba, Python and code-generation key (a dict, as in the manifest).
    Creates Numba's code generator if it did not exist."""
    import llvmlite
    import numba
    from numba.core.registry import cpu_target

    return {"folder": pathlib.Path(folder).name,
            "numba": numba.__version__,
            "llvmlite": llvmlite.__version__,
            "python": sys.implementation.cache_tag,
            "codegen": list(cpu_target.target_context.codegen().magic_tuple())}


def cache_subfolder(source_file, package_dir=None):
    """Where the cache files of kernels defined in ``source_file`` are kept, relative to
    the cache folder: with ``package_dir`` (a content-keyed cache, see
    ``userio.numba_cache.package_subfolder``) the file's folder within the package, else
    Numba's own name, made from the absolute path of the file's folder."""
    if package_dir is not None:
        from .numba_cache import package_subfolder
        return package_subfolder(package_dir, source_file)
    from numba.core.caching import UserProvidedCacheLocator
    return UserProvidedCacheLocator.get_suitable_cache_subpath(str(source_file))


def _keyed(manifest):
    """Whether the bundle holds a content-keyed cache (``raytrace``'s: each entry found by
    its dependency key, every index stamped with the manifest's ``stamp``)."""
    return "stamp" in manifest


def _read_index(index_bytes):
    """(source stamp, {key: data file name}) of a Numba index file (after its version)."""
    stream = io.BytesIO(index_bytes)
    pickle.load(stream)
    return pickle.loads(stream.read())


def _read_stamp(index_bytes):
    """The source stamp of a Numba index file, read from the pickle's opcodes without running
    them: unpickling the whole index would import the kernel modules its types name, and
    seeding runs while the package's first kernel module is being imported (a circular
    import). The stamp is the first item of the pickled ``(stamp, overloads)``: the first
    bytes object, before any class is named; anything else raises ValueError."""
    stream = io.BytesIO(index_bytes)
    for _ in pickletools.genops(stream):     # the version pickle
        pass
    for opcode, arg, _ in pickletools.genops(stream):
        if opcode.name in ("SHORT_BINBYTES", "BINBYTES", "BINBYTES8"):
            return arg
        if opcode.name in ("GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "INST", "OBJ", "NEWOBJ"):
            break
    raise ValueError("the index file does not start with a source stamp")


def _check_stamp(index_bytes, source_file, expected=None):
    """Raise ValueError unless the index's source stamp is what Numba computes for
    ``source_file`` here (Numba 0.68: the SHA-256 of the file's bytes), or, for a
    content-keyed cache, the ``expected`` stamp (bytes) that all its indexes carry."""
    stamp = _read_stamp(index_bytes)
    want = expected if expected is not None else hashlib.sha256(pathlib.Path(source_file).read_bytes()).digest()
    if stamp != want:
        raise ValueError(f"the bundle's index for {source_file} does not match the file")


def _write_atomically(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def why_not(folder, manifest):
    """None when the bundle of ``manifest`` (a dict) fits this process's cache ``folder``,
    else the reason it does not (one line)."""
    import numba

    if not switch_on("RAYTRACE_PREBUILT"):
        return "RAYTRACE_PREBUILT=0"
    if not numba.__version__.startswith(KNOWN_NUMBA):
        return f"Numba {numba.__version__} is not one whose cache index format was checked"
    here = current_key(folder)
    for field, value in here.items():
        if manifest["key"].get(field) != value:
            return f"bundle made for {field} {manifest['key'].get(field)!r}, this is {value!r}"
    return None


def seed(folder, package_dir, bundle_dir=None):
    """Copy the cache files of the bundle in ``bundle_dir`` (``<package_dir>/prebuilt``) into
    the cache ``folder`` when the bundle fits (see the module docstring); index files
    already there are kept. Returns how many kernels (index files) were written, or the
    reason nothing was (a string)."""
    if folder is None:
        return "no writable cache folder"
    bundle_dir = pathlib.Path(bundle_dir or pathlib.Path(package_dir) / "prebuilt")
    try:
        if not (bundle_dir / MANIFEST).exists():
            return "no bundle"
        manifest = json.loads((bundle_dir / MANIFEST).read_text())
        reason = why_not(folder, manifest)
        if reason:
            return reason
        package_dir = pathlib.Path(package_dir)
        keyed = _keyed(manifest)
        expected = bytes.fromhex(manifest["stamp"]) if keyed else None

        def target(entry, name):   # where this checkout's Numba looks for a kernel's file
            sub = cache_subfolder(package_dir / entry["source"], package_dir if keyed else None)
            return pathlib.Path(folder) / sub / name

        missing = [e for e in manifest["indexes"] if not target(e, e["file"]).exists()]
        if not missing:
            return 0
        wanted = {entry["member"]: entry for entry in missing}
        wanted.update({data: entry for entry in missing for data in entry["data"]})
        with tarfile.open(bundle_dir / ARCHIVE, "r:xz") as archive:
            members = {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.name in wanted}
        for entry in missing:
            _check_stamp(members[entry["member"]], package_dir / entry["source"], expected)
        for name, entry in wanted.items():   # the data files first, then the indexes
            if name != entry["member"]:
                _write_atomically(target(entry, pathlib.PurePosixPath(name).name), members[name])
        for entry in missing:
            _write_atomically(target(entry, entry["file"]), members[entry["member"]])
        return len(missing)
    except Exception as exc:   # the fallback is compiling, as without a bundle
        warnings.warn(f"{pathlib.Path(package_dir).name}: shipped kernels not used ({type(exc).__name__}: {exc}); "
                      "kernels compile on first use", RuntimeWarning, stacklevel=2)
        return f"failed: {exc}"


def folder_keys(cache_folder, package_dir):
    """{package-relative index file: sorted index keys (as text)} of a content-keyed cache
    folder (unpickles the indexes: the package's kernel modules get imported)."""
    package_dir, out = pathlib.Path(package_dir), {}
    for index in sorted(pathlib.Path(cache_folder).glob("*/*.nbi")):
        _, overloads = _read_index(index.read_bytes())
        out[f"{index.parent.name}/{index.name}"] = sorted(map(str, overloads))
    return out


def bundle_keys(bundle_dir):
    """:func:`folder_keys` of a bundle (its archive's indexes)."""
    out = {}
    with tarfile.open(pathlib.Path(bundle_dir) / ARCHIVE, "r:xz") as archive:
        for member in archive.getmembers():
            if member.name.endswith(".nbi"):
                _, overloads = _read_index(archive.extractfile(member).read())
                folder, name = (member.name.rsplit("/", 1) if "/" in member.name else (".", member.name))
                out[f"{folder.replace('/', '_') if folder != '.' else '_'}/{name}"] = sorted(map(str, overloads))
    return out


def _member(folder, name):
    """The archive name of ``name`` in the package-relative ``folder`` ("." is the top)."""
    return name if folder == "." else f"{folder}/{name}"


def make_bundle(cache_folder, package_dir, out_dir=None, stamp=None):
    """Write ``kernels.tar.xz`` and ``manifest.json`` into ``out_dir`` (``<package_dir>/prebuilt``)
    from the cache files in ``cache_folder`` that belong to kernels of ``package_dir``
    (compiled by this process's configuration: call in a process whose key is the one to
    ship). ``stamp`` (bytes): the cache is content-keyed (``raytrace``'s), every index
    carries this stamp and lies in a package-relative subfolder. Returns the manifest."""
    package_dir = pathlib.Path(package_dir)
    cache_folder = pathlib.Path(cache_folder)
    sources = {}   # cache subfolder -> package-relative folder
    for folder in sorted({p.parent for p in package_dir.rglob("*.py")}):
        sub = cache_subfolder(folder / "x.py", package_dir if stamp is not None else None)
        sources[sub] = folder.relative_to(package_dir).as_posix()
    indexes, blobs = [], {}
    for index in sorted(cache_folder.glob("*/*.nbi")):
        rel = sources.get(index.parent.name)
        if rel is None:
            continue
        source = _member(rel, index.name.split(".", 1)[0] + ".py")
        member = _member(rel, index.name)
        if stamp is not None and _read_stamp(index.read_bytes()) != stamp:
            continue        # another cache's index in the folder: not this one's
        blobs[member] = index.read_bytes()
        _, overloads = _read_index(blobs[member])
        data = sorted({_member(rel, name) for name in overloads.values()})
        for name in data:
            blobs[name] = (index.parent / pathlib.PurePosixPath(name).name).read_bytes()
        indexes.append({"file": index.name, "source": source, "member": member, "data": data})
    out_dir = pathlib.Path(out_dir or package_dir / "prebuilt")
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{ARCHIVE}.tmp"
    with tarfile.open(tmp, "w:xz", preset=9) as archive:
        for name in sorted(blobs):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(blobs[name]), 0o644
            archive.addfile(info, io.BytesIO(blobs[name]))
    os.replace(tmp, out_dir / ARCHIVE)
    manifest = {"key": current_key(cache_folder), "indexes": indexes,
                "made_by": "python scripts/prebuild_kernels.py"}
    if stamp is not None:
        manifest["stamp"] = stamp.hex()
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest
