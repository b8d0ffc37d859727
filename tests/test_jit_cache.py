"""raytrace's kernel cache (``raytrace/jit/cache.py``, ``folders.py``): files named by what
they hold, written whole, in private folders checked before anything is loaded; two
processes compiling at once, or one killed mid-write, leave a cache that loads.

Every process here gets a cache folder of its own (``NUMBA_CACHE_DIR`` under the test's
``tmp_path``) and compiles one small kernel (``kernels/bsdf.py: ggx_d``, a second or two)."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from raytrace.jit import cache, folders

REPO = pathlib.Path(__file__).resolve().parents[1]

# compile (or load) ggx_d; print whether it was loaded from the cache, and its value
PROBE = textwrap.dedent("""
    import json, sys
    from raytrace.kernels.bsdf import ggx_d
    from raytrace.jit import cache
    value = ggx_d(0.5, 0.1, 0.2, 0.9)
    hits = sum(ggx_d.stats.cache_hits.values())
    print(json.dumps({"loaded": hits > 0, "value": value, "store": str(cache.store()),
                      "reason": cache.reason()}))
""")


def run(tmp_path, script=PROBE, env_extra=None, check=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_"))}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), RAYTRACE_PREBUILT="0", PYTHONPATH=str(REPO))
    env.update(env_extra or {})
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600,
                       cwd=tmp_path)
    if check:
        assert r.returncode == 0, r.stderr[-3000:]
    return r


def probe(tmp_path, **kw):
    import json
    r = run(tmp_path, **kw)
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def kernel_files(tmp_path):
    return sorted((tmp_path / "cache").rglob("bsdf.ggx_d.*.nbk"))


def test_a_kernel_is_written_once_whole_and_loaded_afterwards(tmp_path):
    first, _ = probe(tmp_path)
    assert not first["loaded"]
    files = kernel_files(tmp_path)
    assert len(files) == 1
    second, _ = probe(tmp_path)
    assert second["loaded"] and second["value"] == first["value"]
    # negative control: without the file the same process compiles again
    files[0].unlink()
    third, _ = probe(tmp_path)
    assert not third["loaded"]


def test_every_folder_is_private(tmp_path):
    probe(tmp_path)
    base = tmp_path / "cache" / "raytrace-numba"
    made = [base] + [p for p in base.rglob("*") if p.is_dir()]
    assert len(made) >= 3
    for folder in made:
        assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_a_torn_or_foreign_file_is_a_miss_not_an_error(tmp_path):
    probe(tmp_path)
    [path] = kernel_files(tmp_path)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])               # torn
    again, _ = probe(tmp_path)
    assert not again["loaded"]
    assert path.read_bytes() != whole[: len(whole) // 2]     # rewritten whole
    # a file under this name holding another key (a hash collision, a planted copy)
    import pickle
    key, payload = pickle.loads(path.read_bytes())
    path.write_bytes(pickle.dumps((key.replace("ggx_d", "ggx_x"), payload)))
    other, _ = probe(tmp_path)
    assert not other["loaded"]
    good, _ = probe(tmp_path)                                # negative control: rewritten, found
    assert good["loaded"]


KILLED_MID_WRITE = textwrap.dedent("""
    import os
    from raytrace.jit import folders
    real_replace = os.replace

    def die(src, dst):              # the process dies after writing the temporary file
        if str(dst).endswith(".nbk"):
            with open(src, "r+b") as f:
                f.truncate(100)     # and in the middle of it
            os._exit(9)
        real_replace(src, dst)
    os.replace = die
    from raytrace.kernels.bsdf import ggx_d
    ggx_d(0.5, 0.1, 0.2, 0.9)
""")


def test_a_process_killed_mid_write_leaves_a_cache_that_loads(tmp_path):
    r = run(tmp_path, KILLED_MID_WRITE, check=False)
    assert r.returncode == 9
    assert kernel_files(tmp_path) == []                      # no half file under a kernel's name
    assert list((tmp_path / "cache").rglob(".tmp-*"))        # (what it was writing)
    after, _ = probe(tmp_path)
    assert not after["loaded"]
    again, _ = probe(tmp_path)
    assert again["loaded"]


def test_processes_compiling_the_same_kernels_at_once_leave_a_cache_that_loads(tmp_path):
    """Four processes compile the same kernel into one empty cache at the same moment
    (each waits for the others' start marker, then compiles): all succeed, one file
    remains, and the next process loads it."""
    racing = textwrap.dedent("""
        import os, sys, time, pathlib
        gate = pathlib.Path(sys.argv[1])
        (gate / f"ready-{os.getpid()}").touch()
        deadline = time.monotonic() + 120
        while len(list(gate.glob("ready-*"))) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        from raytrace.kernels.bsdf import ggx_d
        print(ggx_d(0.5, 0.1, 0.2, 0.9))
    """)
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_"))}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), RAYTRACE_PREBUILT="0", PYTHONPATH=str(REPO))
    procs = [subprocess.Popen([sys.executable, "-c", racing, str(gate)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    assert len({o[0] for o in outs}) == 1
    assert len(kernel_files(tmp_path)) == 1
    after, _ = probe(tmp_path)
    assert after["loaded"]


def test_the_newest_keys_of_a_function_are_kept(tmp_path):
    from raytrace.kernels.bsdf import ggx_d
    the_cache = cache.dispatcher_cache(ggx_d)
    for k in range(cache.MAX_KEYS + 3):
        dep = f"{k:016x}"
        for suffix in (f"{dep}.aaaaaaaa.bbbbbbbbbbbbbbbb.nbk", f"{dep}.code.json"):
            path = tmp_path / f"bsdf.ggx_d.{suffix}"
            path.write_bytes(b"x")
            os.utime(path, ns=(k * 10**9, k * 10**9))
    (tmp_path / "bsdf.ggx_dd.0000000000000000.code.json").write_bytes(b"another function's")
    the_cache.prune(tmp_path)
    left = sorted(p.name for p in tmp_path.glob("bsdf.ggx_d.*"))
    assert len(left) == 2 * cache.MAX_KEYS
    assert not any(name.startswith(("bsdf.ggx_d.0000000000000000", "bsdf.ggx_d.0000000000000002"))
                   for name in left)
    assert (tmp_path / "bsdf.ggx_dd.0000000000000000.code.json").exists()


def test_signatures_whose_repr_is_equal_get_their_own_files():
    """A borrowed array's repr is a plain array's (kernels/borrow.py): a kernel compiled
    for one must never be loaded for the other."""
    import numpy as np
    from numba import typeof

    from raytrace.kernels.borrow import BorrowedArray
    from raytrace.kernels.bsdf import ggx_d
    plain = typeof(np.zeros((2, 2)))
    borrowed = BorrowedArray(plain.dtype, plain.ndim, plain.layout)
    assert repr(plain) == repr(borrowed)
    the_cache = cache.dispatcher_cache(ggx_d)
    magic, dep = ("triple", "cpu", ""), "0" * 64
    assert the_cache.file_name(dep, magic, (plain,)) != the_cache.file_name(dep, magic, (borrowed,))


# ------------------------------------------------------------------ private folders
def test_a_folder_of_another_user_a_link_or_a_file_is_refused(tmp_path):
    mine = folders.private(tmp_path / "mine")
    folders.check(mine)                                  # negative control: accepted
    link = tmp_path / "link"
    link.symlink_to(mine)
    with pytest.raises(folders.UnsafeFolder, match="symbolic link"):
        folders.check(link)
    plain = tmp_path / "file"
    plain.write_text("x")
    with pytest.raises(folders.UnsafeFolder, match="not a folder"):
        folders.check(plain)
    if os.getuid() != 0:
        pytest.skip("making a folder of another user needs root")
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o777)
    os.chown(theirs, 65534, 65534)
    with pytest.raises(folders.UnsafeFolder, match="belongs to user 65534"):
        folders.check(theirs)


def test_a_wider_folder_of_ours_is_narrowed_to_0700(tmp_path):
    wide = tmp_path / "wide"
    wide.mkdir()
    os.chmod(wide, 0o777)
    folders.check(wide)
    assert wide.stat().st_mode & 0o777 == 0o700


def test_a_planted_cache_folder_is_never_loaded_from(tmp_path):
    """Another user created the cache folder (and the temporary fallback) first and put a
    pickle in it: raytrace refuses both, says so once, and compiles in memory."""
    if os.getuid() != 0:
        pytest.skip("planting a folder of another user needs root")
    planted = tmp_path / "cache" / "raytrace-numba"
    tmp = tmp_path / "tmp"
    for folder in (planted / "kernels-simd-borrow" / "kernels", tmp / f"raytrace-numba-{os.getuid()}"):
        folder.mkdir(parents=True, mode=0o777)
    marker = tmp_path / "pwned"
    (planted / "kernels-simd-borrow" / "kernels" / "evil.nbk").write_bytes(
        b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR.")
    for path in [planted, *planted.rglob("*"), tmp / f"raytrace-numba-{os.getuid()}"]:
        os.chown(path, 65534, 65534)
    result, stderr = probe(tmp_path, env_extra={"TMPDIR": str(tmp)})
    assert result["store"] == "None" and "belongs to user 65534" in result["reason"]
    assert stderr.count("kept in memory only") == 1
    assert not marker.exists()
    # negative control: the same folder, ours, is used
    for path in [planted, *planted.rglob("*")]:
        os.chown(path, os.getuid(), os.getgid())
    ours, _ = probe(tmp_path, env_extra={"TMPDIR": str(tmp)})
    assert ours["store"] == str(planted / "kernels-simd-borrow")


# ------------------------------------------------------------------ never silent
def test_off_a_terminal_each_kernel_compiled_gets_a_line(tmp_path):
    """``raytrace render`` with stderr a pipe (a log, CI, an IDE): after an edit of
    ``ggx_d`` the notice names the edit, then prints one line per kernel compiled with
    its seconds, then the total (nothing silent for the seconds it compiles). The
    negative control is the same render again: nothing compiles, nothing is said."""
    import shutil
    import time
    root = tmp_path / "src"
    for package in ("raytrace", "userio"):
        shutil.copytree(REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    bsdf = root / "raytrace" / "kernels" / "bsdf.py"
    ggx = "    return 1.0 / (math.pi * a2 * t * t)\n"
    text = bsdf.read_text()
    assert ggx in text
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_"))}
    env.update(PYTHONPATH=str(root), RAYTRACE_NO_WARMUP="1", RAYTRACE_LATE="0")     # the full build's notice
    command = [sys.executable, "-m", "raytrace", "render", str(REPO / "scenes" / "cornell_box.json"),
               "--size", "16", "16", "--spp", "1", "-o", str(tmp_path / "out.png")]
    run_it = dict(env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)   # (not the checkout's)
    first = subprocess.run(command, **run_it)
    assert first.returncode == 0, first.stderr[-3000:]     # (compiled or loaded: the code before the edit)
    bsdf.write_text(text.replace(ggx, f"    _edit = {time.time_ns()}\n{ggx}"))
    r = subprocess.run(command, **run_it)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stderr.splitlines()
    assert any("after edits to kernels/bsdf.py: ggx_d" in line for line in lines), r.stderr
    done = [line for line in lines if line.startswith("raytrace: [")]
    assert any("kernels/path.py: path_rows" in line for line in done), r.stderr
    total = int(done[0].split("/")[1].split("]")[0])
    assert len(done) == total >= 2, r.stderr
    assert all(line.endswith(" s") for line in done)
    assert any("compiled in" in line for line in lines)
    again = subprocess.run(command, **run_it)
    assert again.returncode == 0 and "compil" not in again.stderr, again.stderr
