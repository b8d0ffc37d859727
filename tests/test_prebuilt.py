"""Shipped, ahead-of-time compiled kernels (``raytrace/jit/bundle.py``): used only where
they are what this process would compile (same versions, switches and key recipe, a
processor with every feature of ``x86-64-v3``), and then nothing compiles and the image
is the compiled one's, bit for bit; after an edit they serve every kernel the edit did
not touch and never one it did."""
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import textwrap

import numpy as np
import pytest

from raytrace.jit import bundle, cache

REPO = pathlib.Path(__file__).resolve().parents[1]
SHIPPED = REPO / "raytrace" / "prebuilt"
REBUILD = ("the release's bundle is stale: run `make prebuilt` and commit raytrace/prebuilt/, or, between "
           "releases, give pyproject.toml a development version (X.Y.Z.devN)")


def project_version():
    import tomllib
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def in_development():
    """The bundle is rebuilt at release points only (a version without ``.dev``): between
    them it may lag the kernels, and then its changed kernels go unused."""
    return ".dev" in project_version()


def manifest():
    return json.loads((SHIPPED / bundle.MANIFEST).read_text())


def _raytrace_dispatchers():
    """{file-name base ("path.path_rows"): [dispatchers]} of every kernel module's kernels."""
    import importlib
    from numba.core.dispatcher import Dispatcher

    from raytrace.jit import late
    out = {}
    for path in sorted((REPO / "raytrace").rglob("*.py")):
        text = path.read_text()
        if "raytrace.jit import" not in text and "from .roles import" not in text:
            continue
        name = "raytrace." + ".".join(path.relative_to(REPO / "raytrace").with_suffix("").parts)
        module = importlib.import_module(name.replace(".__init__", ""))
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == module.__name__:
                out.setdefault(cache.dispatcher_cache(value)._name, []).append(value)
                if late._is_row_kernel(value):        # and its late twin (raytrace/jit/late.py)
                    twin = late.variant(value)
                    out.setdefault(cache.dispatcher_cache(twin)._name, []).append(twin)
    return out


def stale_kernels():
    """The bundled kernels none of whose files is named by the kernel's current dependency
    key: the kernels edited, or calling something edited, since the bundle was made."""
    from raytrace.jit import keys
    kernels, shipped = _raytrace_dispatchers(), {}
    for member in bundle.shipped_names():
        if member.endswith(".nbk"):
            name = pathlib.PurePosixPath(member).name
            base, dep = name.rsplit(".", 4)[0], name.rsplit(".", 4)[1]
            shipped.setdefault(base, set()).add(dep)
    old = []
    for base, deps in shipped.items():
        if base not in kernels:
            old.append(base + " (gone)")
        elif not any(keys.function_key(d.py_func)[:16] in deps for d in kernels[base]):
            old.append(base)
    return sorted(old)


def environment_mismatch():
    """Why this environment cannot use the bundle, or None."""
    return bundle.why_not(manifest())


def test_raytrace_ships_a_bundle_for_the_portable_level():
    key = manifest()["key"]
    assert key["cpu"] == cache.PORTABLE_CPU == "x86-64-v3"
    names = bundle.shipped_names()
    assert any(n.startswith("kernels/path.path_rows.") for n in names)
    assert any(n.startswith("kernels/whitted.whitted_rows.") for n in names)


def test_bundle_is_current():
    """At a release, every shipped kernel is the current code's (else: REBUILD)."""
    old = stale_kernels()
    if in_development() and old:
        pytest.skip(f"{len(old)} shipped kernels changed since the release: bundles are rebuilt at releases")
    assert old == [], REBUILD


def test_bundle_is_current_catches_an_edit(monkeypatch):
    """Negative control for the test above: a kernel whose key changed is reported."""
    from raytrace.jit import keys
    real = keys.function_key
    monkeypatch.setattr(keys, "function_key",
                        lambda f: "f" * 64 if f.__qualname__ == "path_rows" else real(f))
    assert "path.path_rows" in stale_kernels()


@pytest.mark.parametrize("field, value", [
    ("key version", "0"), ("numba", "0.68.0rc1"), ("llvmlite", "0.49.0"), ("numpy", "1.0.0"),
    ("python", "cpython-399"), ("mode", "nosimd-borrow"), ("cpu", "znver4"),
])
def test_a_bundle_made_for_anything_else_is_not_used(field, value):
    m = manifest()
    if bundle.why_not(m) is not None:
        pytest.skip(bundle.why_not(m))
    m["key"][field] = value
    assert field in bundle.why_not(m)


def test_switch_off_and_a_processor_without_the_level(monkeypatch):
    m = manifest()
    if bundle.why_not(m) is not None:
        pytest.skip(bundle.why_not(m))
    monkeypatch.setattr(cache, "host_has_portable_level", lambda: False)
    assert "lacks a feature of x86-64-v3" in bundle.why_not(m)
    monkeypatch.setenv("RAYTRACE_PREBUILT", "0")
    assert bundle.why_not(m) == "RAYTRACE_PREBUILT=0"


UNPACK = textwrap.dedent("""
    import json, sys, pathlib
    from raytrace.jit import bundle
    folder = bundle.folder(pathlib.Path(sys.argv[1]))
    print(json.dumps([str(folder) if folder else None, bundle.reason()]))
""")


def _unpack(tmp_path, archive_members=None):
    """Unpack a copy of the bundle (or one with ``archive_members``) in a fresh process."""
    out = tmp_path / "bundle"
    out.mkdir()
    shutil.copy(SHIPPED / bundle.MANIFEST, out / bundle.MANIFEST)
    if archive_members is None:
        shutil.copy(SHIPPED / bundle.ARCHIVE, out / bundle.ARCHIVE)
    else:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:xz") as tar:
            for name, data in archive_members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        (out / bundle.ARCHIVE).write_bytes(buffer.getvalue())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_"))}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", UNPACK, str(out)], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_the_bundle_unpacks_into_a_private_folder(tmp_path):
    if environment_mismatch():
        pytest.skip(environment_mismatch())
    folder, reason = _unpack(tmp_path)
    assert reason is None
    folder = pathlib.Path(folder)
    assert folder.stat().st_mode & 0o777 == 0o700
    assert sorted(f"{p.parent.name}/{p.name}" for p in folder.glob("*/*")) == bundle.shipped_names()


@pytest.mark.parametrize("member", ["../escape.nbk", "/abs/olute.nbk", "kernels/../../x.nbk", "deep/er/x.nbk"])
def test_an_archive_member_outside_its_folder_is_refused(tmp_path, member):
    if environment_mismatch():
        pytest.skip(environment_mismatch())
    folder, reason = _unpack(tmp_path, {"kernels/ok.nbk": b"x", member: b"y"})
    assert folder is None and "unexpected member" in reason
    assert not (tmp_path / "escape.nbk").exists() and not (tmp_path / "x.nbk").exists()
    # negative control: the same archive without the bad member unpacks
    good_tmp = tmp_path / "good"
    good_tmp.mkdir()
    folder, reason = _unpack(good_tmp, {"kernels/ok.nbk": b"x"})
    assert folder is not None and reason is None


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
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_"))}
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
    no raytrace kernel, and leaves Numba's CPU setting alone. The same copy with ``phong``
    edited compiles only the unit the edit touched (the bundle serves the rest, the row
    kernel's shipped late twin included), and
    its image equals, bit for bit, that of kernels all compiled from the edited source
    with the bundle switched off (never a stale shipped kernel)."""
    if environment_mismatch() or stale_kernels():
        pytest.skip(environment_mismatch() or "shipped kernels changed since the release")
    clone = tmp_path / "clone"
    for package in ("raytrace", "userio", "curves", "skinning", "particles"):
        shutil.copytree(REPO / package, clone / package, ignore=shutil.ignore_patterns("__pycache__"))
    scene = REPO / "scenes" / "spheres.json"
    seeded, compiled_seeded, where, cpu = _render(tmp_path, "seeded", clone, scene)
    assert where.is_relative_to(clone) and cpu is None
    assert not [name for name in compiled_seeded if name.startswith("raytrace.")], compiled_seeded
    whitted = clone / "raytrace" / "kernels" / "whitted.py"
    source = whitted.read_text()
    assert PHONG in source
    whitted.write_text(source.replace(PHONG, PHONG.replace("spec * ks", "0.5 * spec * ks"), 1))
    # (no background build: RAYTRACE_NO_WARMUP) the shipped late twin of whitted_rows
    # stands in (raytrace/jit/late.py): only the unit phong is inlined into compiles
    edited, compiled_edited, _, _ = _render(tmp_path, "edited", clone, scene, RAYTRACE_NO_WARMUP="1")
    assert "raytrace.kernels.whitted.direct_phong" in compiled_edited
    assert not [n for n in compiled_edited if n.startswith("raytrace.kernels.whitted.whitted_rows")], compiled_edited
    assert not [n for n in compiled_edited if n.startswith(("raytrace.accel.build", "raytrace.accel.traverse"))]
    own, compiled_own, _, _ = _render(tmp_path, "compiled", clone, scene, RAYTRACE_PREBUILT="0")
    assert "raytrace.accel.build._build_binary" in compiled_own   # the control compiled everything
    assert edited.dtype == own.dtype and np.array_equal(edited, own)
    assert not np.array_equal(edited, seeded)                     # and the edit shows
