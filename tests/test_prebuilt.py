"""Shipped, ahead-of-time compiled kernels (userio/prebuilt.py): used only where they are
exactly what this process would compile, and then nothing compiles and the image is the
compiled one's, bit for bit."""
import hashlib
import io
import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys
import tarfile
import textwrap

import numba
import numpy as np
import pytest

from userio import numba_cache, prebuilt

import raytrace._numba_setup  # noqa: E402,F401  (what every kernel module does first: the CPU level)

REPO = pathlib.Path(__file__).resolve().parents[1]
BUNDLED = [name for name in ("raytrace", "curves", "skinning", "particles")
           if (REPO / name / "prebuilt" / prebuilt.MANIFEST).exists()]
REBUILD = ("the release's bundle is stale: run `make prebuilt` and commit */prebuilt/, or, between "
           "releases, give pyproject.toml a development version (X.Y.Z.devN)")


def project_version():
    import tomllib
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def in_development():
    """The bundle is rebuilt at release points only (a version without ``.dev``): between
    them it may lag the kernels, and then goes unused (kernels compile on first use)."""
    return ".dev" in project_version()


def stale(package):
    """Why the package's bundle does not fit the source here (None: it fits)."""
    if manifest(package)["key"]["folder"] != expected_folder(package):
        return f"{package}'s kernels changed since its bundle was made (version {project_version()})"
    if package == "raytrace" and stale_kernels():
        old = stale_kernels()
        return (f"{len(old)} of raytrace's bundled kernels changed since the bundle was made "
                f"({', '.join(old[:3])}{', ...' if len(old) > 3 else ''}; version {project_version()})")
    return None


def _raytrace_dispatchers():
    """{index file base ("path.path_rows"): [dispatchers]} of every kernel module's kernels."""
    import importlib
    from numba.core.dispatcher import Dispatcher
    out = {}
    for path in sorted((REPO / "raytrace").rglob("*.py")):
        if "njit" not in path.read_text():
            continue
        name = "raytrace." + ".".join(path.relative_to(REPO / "raytrace").with_suffix("").parts)
        module = importlib.import_module(name.replace(".__init__", ""))
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == module.__name__:
                base = path.stem + "." + value.py_func.__qualname__.replace("<", "").replace(">", "")
                out.setdefault(base, []).append(value)     # kernels made by one factory share a name
    return out


_STALE = []


def stale_kernels():
    """The bundled raytrace kernels none of whose entries is cached under the kernel's
    current dependency key (``raytrace/compile/keys.py``): the kernels edited, or calling
    something edited, since the bundle was made."""
    if not _STALE:
        from raytrace.compile import keys
        kernels, old = _raytrace_dispatchers(), []
        with tarfile.open(REPO / "raytrace" / "prebuilt" / prebuilt.ARCHIVE, "r:xz") as archive:
            for entry in manifest("raytrace")["indexes"]:
                base = entry["file"].rsplit("-k.", 1)[0]
                want = {("dependency key", keys.function_key(d.py_func)) for d in kernels.get(base, [])}
                _, overloads = prebuilt._read_index(archive.extractfile(entry["member"]).read())
                if not any(k[-1] in want for k in overloads):
                    old.append(base)
        _STALE.append(old)
    return _STALE[0]


def manifest(package):
    return json.loads((REPO / package / "prebuilt" / prebuilt.MANIFEST).read_text())


def expected_folder(package):
    if package == "raytrace":
        from raytrace._numba_cache import folder_parts
        return numba_cache.folder_name(*folder_parts(REPO / "raytrace"))
    return numba_cache.folder_name(package, numba_cache.source_hash(REPO / package))


def environment_mismatch(package):
    """Why this test environment cannot use the bundle (another Numba, Python or CPU; a
    development version whose kernels changed since the release), or None."""
    if in_development() and stale(package):
        return stale(package) + ": bundles are rebuilt at release points"
    key = manifest(package)["key"]
    import llvmlite
    if (key["numba"], key["llvmlite"], key["python"]) != (numba.__version__, llvmlite.__version__,
                                                         sys.implementation.cache_tag):
        return f"bundle made for Numba {key['numba']}, llvmlite {key['llvmlite']}, {key['python']}"
    if numba.config.CPU_NAME != numba_cache.PORTABLE_CPU:
        return f"Numba does not compile for {numba_cache.PORTABLE_CPU} here (no such CPU level?)"
    return None


def test_raytrace_ships_a_bundle():
    assert "raytrace" in BUNDLED


@pytest.mark.parametrize("package", BUNDLED)
def test_bundle_is_current(package):
    """The bundle was compiled from the source as it is: same cache folder name; for a
    library each kernel's index stamped with the SHA-256 of its source file as it is now,
    for raytrace each kernel cached under its current dependency key (and every index
    carrying the manifest's stamp). Holds at release points; a development version skips
    it while the kernels have changed."""
    if in_development() and stale(package):
        pytest.skip(stale(package) + ": bundles are rebuilt at release points")
    m = manifest(package)
    assert m["key"]["folder"] == expected_folder(package), REBUILD
    if package == "raytrace":
        assert not stale_kernels(), REBUILD
    expected = bytes.fromhex(m["stamp"]) if "stamp" in m else None
    assert (expected is not None) == (package == "raytrace")
    with tarfile.open(REPO / package / "prebuilt" / prebuilt.ARCHIVE, "r:xz") as archive:
        names = set(archive.getnames())
        for entry in m["indexes"]:
            assert entry["member"] in names and set(entry["data"]) <= names, entry
            prebuilt._check_stamp(archive.extractfile(entry["member"]).read(), REPO / package / entry["source"],
                                  expected)


@pytest.mark.parametrize("package", BUNDLED)
def test_bundle_is_for_this_numba_and_cpu_level(package):
    key = manifest(package)["key"]
    assert key["codegen"][1:] == [numba_cache.PORTABLE_CPU, ""], key["codegen"]
    reason = environment_mismatch(package)
    if reason:
        pytest.skip(reason)
    assert key["codegen"] == list(numba.core.registry.cpu_target.target_context.codegen().magic_tuple())


@pytest.mark.parametrize("package", [p for p in BUNDLED if p != "raytrace"][:1])
def test_check_stamp_rejects_another_file(package):
    if stale(package):
        pytest.skip(stale(package))
    m = manifest(package)
    entry = m["indexes"][0]
    with tarfile.open(REPO / package / "prebuilt" / prebuilt.ARCHIVE, "r:xz") as archive:
        index = archive.extractfile(entry["member"]).read()
    prebuilt._check_stamp(index, REPO / package / entry["source"])   # its own file passes
    with pytest.raises(ValueError):
        prebuilt._check_stamp(index, REPO / "README.md")


def test_check_stamp_of_a_keyed_bundle_wants_the_manifest_stamp():
    if stale("raytrace"):
        pytest.skip(stale("raytrace"))
    m = manifest("raytrace")
    entry = m["indexes"][0]
    with tarfile.open(REPO / "raytrace" / "prebuilt" / prebuilt.ARCHIVE, "r:xz") as archive:
        index = archive.extractfile(entry["member"]).read()
    prebuilt._check_stamp(index, REPO / "raytrace" / entry["source"], bytes.fromhex(m["stamp"]))
    with pytest.raises(ValueError):
        prebuilt._check_stamp(index, REPO / "raytrace" / entry["source"], b"another cache's stamp")
    with pytest.raises(ValueError):          # nor the source file's own hash (a library's stamp)
        prebuilt._check_stamp(index, REPO / "raytrace" / entry["source"])


def _bundle_copy(tmp_path, change=None, archive_bytes=None):
    """A copy of raytrace's bundle folder, its manifest key changed by ``change`` (dict)."""
    out = tmp_path / "bundle"
    out.mkdir(parents=True)
    m = manifest("raytrace")
    m["key"].update(change or {})
    (out / prebuilt.MANIFEST).write_text(json.dumps(m))
    source = REPO / "raytrace" / "prebuilt" / prebuilt.ARCHIVE
    (out / prebuilt.ARCHIVE).write_bytes(archive_bytes if archive_bytes is not None else source.read_bytes())
    return out


def _cache_folder(tmp_path):
    folder = tmp_path / "cache" / manifest("raytrace")["key"]["folder"]
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize("change, word", [
    ({"folder": "raytrace-deps0-simd-borrow"}, "folder"),   # another key recipe
    ({"numba": "0.68.0rc1"}, "numba"),
    ({"llvmlite": "0.49.0"}, "llvmlite"),
    ({"python": "cpython-399"}, "python"),
    ({"codegen": ["x86_64-unknown-linux-gnu", "znver4", "+avx512f"]}, "codegen"),   # another CPU
])
def test_a_bundle_for_anything_else_is_not_used(tmp_path, change, word):
    if environment_mismatch("raytrace"):
        pytest.skip(environment_mismatch("raytrace"))
    folder = _cache_folder(tmp_path)
    result = prebuilt.seed(folder, REPO / "raytrace", _bundle_copy(tmp_path, change))
    assert isinstance(result, str) and word in result, result
    assert not any(folder.rglob("*")), "nothing may be written"


def test_a_fitting_bundle_seeds_every_kernel_and_keeps_what_is_there(tmp_path):
    """Negative control of the test above: the unchanged manifest seeds. An index that
    exists (compiled here) is kept as it is."""
    if environment_mismatch("raytrace"):
        pytest.skip(environment_mismatch("raytrace"))
    m = manifest("raytrace")
    folder = _cache_folder(tmp_path)
    first = m["indexes"][0]
    mine = folder / prebuilt.cache_subfolder(REPO / "raytrace" / first["source"], REPO / "raytrace") / first["file"]
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"compiled here")
    assert prebuilt.seed(folder, REPO / "raytrace", _bundle_copy(tmp_path)) == len(m["indexes"]) - 1
    assert mine.read_bytes() == b"compiled here"
    for entry in m["indexes"][1:]:
        sub = folder / prebuilt.cache_subfolder(REPO / "raytrace" / entry["source"], REPO / "raytrace")
        assert (sub / entry["file"]).exists()
        assert all((sub / pathlib.PurePosixPath(d).name).exists() for d in entry["data"])
    assert prebuilt.seed(folder, REPO / "raytrace", _bundle_copy(tmp_path / "again")) == 0


def test_a_broken_archive_warns_and_writes_no_index(tmp_path):
    if environment_mismatch("raytrace"):
        pytest.skip(environment_mismatch("raytrace"))
    folder = _cache_folder(tmp_path)
    with pytest.warns(RuntimeWarning, match="shipped kernels not used"):
        result = prebuilt.seed(folder, REPO / "raytrace", _bundle_copy(tmp_path, archive_bytes=b"not xz"))
    assert result.startswith("failed")
    assert not list(folder.rglob("*.nbi"))


def test_an_index_with_another_stamp_is_refused_before_anything_is_written(tmp_path):
    """Second guard, behind the folder name: each index must carry the manifest's stamp
    (here the manifest names another one)."""
    if environment_mismatch("raytrace"):
        pytest.skip(environment_mismatch("raytrace"))
    folder = _cache_folder(tmp_path)
    bundle = _bundle_copy(tmp_path)
    m = json.loads((bundle / prebuilt.MANIFEST).read_text())
    m["stamp"] = b"another cache".hex()
    (bundle / prebuilt.MANIFEST).write_text(json.dumps(m))
    with pytest.warns(RuntimeWarning, match="does not match"):
        result = prebuilt.seed(folder, REPO / "raytrace", bundle)
    assert result.startswith("failed")
    assert not any(folder.rglob("*"))


def test_switch_off(tmp_path, monkeypatch):
    monkeypatch.setenv("RAYTRACE_PREBUILT", "0")
    folder = _cache_folder(tmp_path)
    assert prebuilt.seed(folder, REPO / "raytrace", _bundle_copy(tmp_path)) == "RAYTRACE_PREBUILT=0"


RENDER = """
import json, sys
import numpy as np
from numba.core import event
with event.install_recorder("numba:compile") as rec:
    import raytrace
    scene = raytrace.load_scene(sys.argv[1])
    image = raytrace.render(scene, width=40, height=30, spp=2, progress=False)
np.save(sys.argv[2], image)
compiled = sorted({ev.data["dispatcher"].py_func.__module__ + "." + ev.data["dispatcher"].py_func.__qualname__
                   for _, ev in rec.buffer if ev.is_start})
import numba
print(json.dumps([raytrace.__file__, compiled, numba.config.CPU_NAME]))
"""


def _render(tmp_path, tag, source_root, scene, **env_vars):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_CPU"))}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / f"cache-{tag}"), PYTHONPATH=str(source_root), **env_vars)
    out = tmp_path / f"{tag}.npy"
    r = subprocess.run([sys.executable, "-c", RENDER, str(scene), str(out)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    where, compiled, cpu = json.loads(r.stdout.strip().splitlines()[-1])
    return np.load(out), compiled, pathlib.Path(where), cpu


PHONG = "    return intensity * (n_dot_l * kd + spec * ks)\n"


def test_fresh_checkout_renders_without_compiling_and_like_a_compiled_render(tmp_path):
    """A copy of the packages at another path (a fresh clone) with an empty cache compiles
    no raytrace kernel. The same copy with ``phong`` edited compiles only the kernels the
    edit touched (the bundle serves the rest), and its image equals, bit for bit, that of
    kernels all compiled from the edited source with the bundle switched off (never a
    stale shipped kernel). Fails when the seeding stops working (a Numba change)."""
    if environment_mismatch("raytrace"):
        pytest.skip(environment_mismatch("raytrace"))
    clone = tmp_path / "clone"
    for package in ("raytrace", "userio", "curves", "skinning", "particles"):
        shutil.copytree(REPO / package, clone / package, ignore=shutil.ignore_patterns("__pycache__"))
    scene = REPO / "scenes" / "spheres.json"
    seeded, compiled_seeded, where, cpu = _render(tmp_path, "seeded", clone, scene)
    assert where.is_relative_to(clone) and cpu == numba_cache.PORTABLE_CPU
    assert not [name for name in compiled_seeded if name.startswith("raytrace.")], compiled_seeded
    whitted = clone / "raytrace" / "kernels" / "whitted.py"
    source = whitted.read_text()
    assert PHONG in source
    whitted.write_text(source.replace(PHONG, PHONG.replace("spec * ks", "0.5 * spec * ks"), 1))
    edited, compiled_edited, _, _ = _render(tmp_path, "edited", clone, scene)
    assert "raytrace.kernels.whitted.whitted_rows" in compiled_edited
    assert not [n for n in compiled_edited if n.startswith(("raytrace.accel.build", "raytrace.accel.traverse"))]
    own, compiled_own, _, _ = _render(tmp_path, "compiled", clone, scene, RAYTRACE_PREBUILT="0")
    assert "raytrace.accel.build._build_binary" in compiled_own   # the control compiled everything
    assert edited.dtype == own.dtype and np.array_equal(edited, own)
    assert not np.array_equal(edited, seeded)                     # and the edit shows


PORTABLE = """
import json, numba
{before}
import raytrace.shapes      # a kernel module: sets Numba up before its kernels are made
print(json.dumps([numba.config.CPU_NAME, numba.config.CPU_FEATURES]))
"""


@pytest.mark.parametrize("before, env_vars, expected", [
    ("", {}, [numba_cache.PORTABLE_CPU, ""]),
    ("numba.njit(lambda x: x + 1)", {}, [None, None]),   # code generator already made: left alone
    ("", {"NUMBA_CPU_NAME": "generic"}, ["generic", ""]),   # the user's choice wins
    ("", {"RAYTRACE_PORTABLE_CPU": "0"}, [None, None]),
])
def test_portable_cpu_level_is_chosen_only_before_the_first_kernel(tmp_path, before, env_vars, expected):
    import llvmlite.binding as ll
    host = ll.get_host_cpu_features()
    if not all(host.get(f, False) for f in numba_cache.PORTABLE_FEATURES):
        pytest.skip(f"this CPU lacks {numba_cache.PORTABLE_CPU}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_CPU"))}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), **env_vars)
    r = subprocess.run([sys.executable, "-c", PORTABLE.format(before=before)], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == expected


def test_seeding_imports_no_kernel_module(tmp_path):
    """Seeding runs while the package's first kernel module is being imported; reading the
    bundle's index stamps must import nothing (once it unpickled whole indexes, whose types
    name other kernel modules: ``import raytrace.shapes`` first was a circular import)."""
    if environment_mismatch("raytrace"):
        pytest.skip(environment_mismatch("raytrace"))
    code = ("import sys, raytrace.shapes, raytrace._numba_setup as s; "
            "print(sorted(m for m in sys.modules if m.startswith('raytrace.accel')), "
            "sum(1 for _ in s.CACHE_FOLDER.rglob('*.nbi')))")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    imported, seeded = r.stdout.rsplit("]", 1)
    assert imported == "[" and int(seeded) == len(manifest("raytrace")["indexes"])


def test_the_stamp_reader_refuses_an_index_without_a_leading_stamp():
    """Negative control: a pickle whose first item is not a bytes stamp is refused."""
    data = pickle.dumps(1) + pickle.dumps(((1.0, 2), {}))
    with pytest.raises(ValueError, match="source stamp"):
        prebuilt._read_stamp(data)
    good = pickle.dumps(1) + pickle.dumps((b"x" * 32, {("sig",): "f.nbc"}))
    assert prebuilt._read_stamp(good) == b"x" * 32
