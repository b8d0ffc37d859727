"""``raytrace regress``: a folder of scenes against a folder of references, with sidecars,
--update, the HTML report (checked in headless Chromium) and the JUnit file."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import imageio.v3 as iio
import numpy as np
import pytest

import raytrace
from raytrace import cli

SIZE = (24, 18)


def _scene(color, sphere_x=0.0, spp=1):
    """A small Whitted scene: a coloured sphere over a plane, lit by a point light, on a
    background of ``color`` (each scene's own, so the report's screenshot can find it)."""
    return {
        "camera": {"center": [0, 1, 4], "look_at": [0, 0.5, 0], "fov": 40},
        "image": {"width": SIZE[0], "height": SIZE[1], "spp": spp},
        "background": {"color": color, "ambient": [0.1, 0.1, 0.1]},
        "materials": {"ball": {"diffuse": [0.9, 0.6, 0.2], "specular": [0.3, 0.3, 0.3], "shininess": 20},
                      "floor": {"diffuse": [0.5, 0.5, 0.5]}},
        "lights": [{"type": "point", "position": [2, 4, 3], "color": [1, 1, 1]}],
        "objects": [{"type": "sphere", "center": [sphere_x, 0.5, 0], "radius": 0.5, "material": "ball"},
                    {"type": "plane", "normal": [0, 1, 0], "offset": 0, "material": "floor"}],
    }


COURSE_SCENE = """
Camera {
    center 0 0 10
    direction 0 0 -1
    up 0 1 0
    fov 20
}
Background {
    color 0.2 0 0.6
    ambient_light 0 0 0
}
Materials {
    Material { diffuse 1 1 1 }
}
Scene {
    Node {
        Transform {
            z_rotate 45
            scale 1 0.2 1
        }
        Component<Material> { index 0 }
        Component<Object> {
            type sphere
            radius 1
        }
    }
    Node {
        Component<Light> {
            type directional
            direction -0.2 -0.2 -1
            color 1 1 1
        }
    }
}
"""
COLORS = {"alpha": [0.9, 0.1, 0.1], "beta": [0.1, 0.8, 0.1], "gamma": [0.1, 0.2, 0.9]}


@pytest.fixture
def folders(tmp_path):
    scenes, refs = tmp_path / "scenes", tmp_path / "refs"
    scenes.mkdir()
    for name, color in COLORS.items():
        (scenes / f"{name}.json").write_text(json.dumps(_scene(color)))
    return scenes, refs


def regress(capsys, *argv):
    status = cli.main(["regress", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_update_creates_references_then_everything_passes(folders, capsys, tmp_path):
    scenes, refs = folders
    status, out, _ = regress(capsys, scenes, refs, "--update")
    assert status == 0 and len(re.findall(r"^UPDATED ", out, re.M)) == 3
    for name in COLORS:
        side = json.loads((refs / f"{name}.ref.json").read_text())
        assert (refs / f"{name}.png").is_file()
        assert side["spp"] == 1 and side["seed"] == 0 and side["integrator"] == "whitted"
        assert side["tolerance"] == "mae<=1/255,over<=0.02,block<=4/255"
        assert side["command"].startswith("raytrace regress") and side["made_by"].startswith("raytrace ")
        assert iio.imread(refs / f"{name}.png").shape == (SIZE[1], SIZE[0], 3)
    status, out, _ = regress(capsys, scenes, refs, "--junit", tmp_path / "j.xml")
    assert status == 0 and out.strip().splitlines()[-1] == "regress: PASS: 3 scenes, 3 passed"
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "0", "0")


def test_a_wrong_reference_fails_is_named_and_listed_first(folders, capsys, tmp_path):
    scenes, refs = folders
    regress(capsys, scenes, refs, "--update")
    # 'beta' gets a reference of a different picture (the sphere moved), same size
    moved = raytrace.render(raytrace.load_scene(_scene(COLORS["beta"], sphere_x=0.4)))
    raytrace.save_image(refs / "beta.png", moved)
    report, junit = tmp_path / "report", tmp_path / "junit.xml"
    status, out, _ = regress(capsys, scenes, refs, "--report", report, "--junit", junit)
    assert status == 1
    last = out.strip().splitlines()[-1]
    assert last.startswith("regress: FAIL: 3 scenes, 2 passed, 1 failed (beta)")
    assert re.search(r"^FAILED +beta: FAIL: ", out, re.M)
    # the JUnit file parses with a standard XML parser and counts right
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == \
        ("3", "1", "0", "0")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == set(COLORS)
    failure = cases["beta"].find("failure")
    assert failure is not None and failure.get("type") == "ImageMismatch" and "over" in failure.get("message")
    assert cases["alpha"].find("failure") is None and cases["alpha"].find("error") is None
    # the report lists the failure first
    page = (report / "index.html").read_text()
    order = [m.group(1) for m in re.finditer(r'<section class="\w+" id="scene-(\w+)"', page)]
    assert order == ["beta", "alpha", "gamma"]
    assert '<span class="badge failed">FAILED</span>beta' in page
    for name in COLORS:
        for kind in ("expected", "actual", "diff"):
            assert (report / "images" / f"{name}.{kind}.png").is_file()
    # --update fixes it, says which, and leaves the passing references alone
    before = {n: (refs / f"{n}.png").read_bytes() for n in ("alpha", "gamma")}
    status, out, _ = regress(capsys, scenes, refs, "--update")
    assert status == 0 and re.search(r"^UPDATED +beta: reference rewritten \(was failed", out, re.M)
    assert len(re.findall(r"^UPDATED ", out, re.M)) == 1
    assert all((refs / f"{n}.png").read_bytes() == b for n, b in before.items())
    assert regress(capsys, scenes, refs)[0] == 0


def test_settings_come_from_the_sidecar_for_references_made_elsewhere(tmp_path, capsys):
    """A course scene (.txt) with a reference 'from the course's program': size from the
    image, spp and seed from the sidecar, not the scene's defaults; --update keeps it."""
    scenes, refs = tmp_path / "course", tmp_path / "solutions"
    scenes.mkdir()
    refs.mkdir()
    (scenes / "sphere.txt").write_text(COURSE_SCENE)
    json_scene = _scene(COLORS["alpha"], spp=16)            # the scene file asks for 16 spp
    (scenes / "ball.json").write_text(json.dumps(json_scene))
    # the 'solutions': 40 x 30 at one sample per pixel (the pixel centre), made outside regress
    for name, path in (("sphere", scenes / "sphere.txt"), ("ball", scenes / "ball.json")):
        image = raytrace.render(raytrace.load_scene(path), width=40, height=30, spp=1)
        raytrace.save_image(refs / f"{name}.png", image)
        side = {"spp": 1, "command": f"a4 -input {path.name} -size 40 30 -output {name}.png",
                "made_by": "course sample solution", "tolerance": "mae<=1/255,over<=0.02,block<=4/255"}
        (refs / f"{name}.ref.json").write_text(json.dumps(side))
    status, out, _ = regress(capsys, scenes, refs)
    assert status == 0, out
    # without the sidecar's spp the scene's own 16 jittered samples differ from the solution
    scene16 = raytrace.render(raytrace.load_scene(scenes / "ball.json"), width=40, height=30)
    from raytrace.grade import compare
    assert not compare(scene16, refs / "ball.png").passed
    # a failing external reference is not overwritten by --update
    side = json.loads((refs / "ball.ref.json").read_text())
    side["seed"] = 5
    side["spp"] = 3
    (refs / "ball.ref.json").write_text(json.dumps(side))
    old = (refs / "ball.png").read_bytes()
    status, out, _ = regress(capsys, scenes, refs, "--update")
    assert status == 1 and "kept: made by 'course sample solution'" in out
    assert (refs / "ball.png").read_bytes() == old


def test_bad_input(tmp_path, capsys, folders):
    scenes, refs = folders
    regress(capsys, scenes, refs, "--update")
    status, _, err = regress(capsys, tmp_path / "nowhere", refs)
    assert status == 2 and "scenes folder not found" in err and len(err.strip().splitlines()) == 1
    status, _, err = regress(capsys, scenes, tmp_path / "norefs")
    assert status == 2 and "references folder not found (use --update" in err
    status, _, err = regress(capsys, scenes, refs, "--junit", tmp_path / "j.txt")
    assert status == 2 and "unsupported JUnit file format" in err
    status, _, err = regress(capsys, scenes, refs, "--only", "delta")
    assert status == 2 and "no scene named delta" in err
    # a broken sidecar, a broken scene and a truncated reference are errors of their scene only
    (refs / "alpha.ref.json").write_text('{"spp": 2, "sampels": 3}')
    (scenes / "beta.json").write_text("{ nope")
    data = (refs / "gamma.png").read_bytes()
    (refs / "gamma.png").write_bytes(data[: len(data) // 2])
    status, out, _ = regress(capsys, scenes, refs)
    assert status == 1
    assert re.search(r"^ERROR +alpha: .*alpha\.ref\.json: sampels: unknown key", out, re.M)
    assert re.search(r"^ERROR +beta: .*beta\.json: line 1 column 3: invalid JSON", out, re.M)
    assert re.search(r"^ERROR +gamma: .*gamma\.png: cannot read PNG", out, re.M)


# ----------------------------------------------------------------- the report in a browser
def _chromium():
    """The Chromium binary on the PATH, or None (Debian: ``apt-get install -y chromium``;
    the test installs nothing itself)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]


def _browse(chromium, url, tmp_path, *extra):
    profile = tmp_path / f"profile{len(list(tmp_path.glob('profile*')))}"
    proc = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=3000",
                           *extra, url], capture_output=True, text=True, timeout=120)
    return proc


def _console_errors(stderr):
    """Console messages and page errors Chromium logged (``CONSOLE`` lines)."""
    return [line for line in stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]


def test_report_in_a_headless_browser(folders, capsys, tmp_path):
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium on the PATH for the browser check of the report (Debian: "
                    "apt-get install -y chromium)")
    scenes, refs = folders
    regress(capsys, scenes, refs, "--update")
    raytrace.save_image(refs / "beta.png", raytrace.render(raytrace.load_scene(_scene(COLORS["beta"], 0.4))))
    report = tmp_path / "report"
    assert regress(capsys, scenes, refs, "--report", report)[0] == 1
    url = (report / "index.html").resolve().as_uri()
    dom = _browse(chromium, url, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    images = re.search(r'data-images-loaded="(\d+)/(\d+)"', dom.stdout)
    assert images, "the page's load handler did not run"
    assert images.group(1) == images.group(2) == str(3 * 4), images.group(0)   # 3 scenes x 4 images
    assert not _console_errors(dom.stderr), _console_errors(dom.stderr)
    shot = tmp_path / "report.png"
    run = _browse(chromium, url, tmp_path, f"--screenshot={shot}", "--window-size=1100,1900")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    assert not _console_errors(run.stderr), _console_errors(run.stderr)
    pixels = iio.imread(shot)[..., :3].astype(int)
    out_dir = pathlib.Path(os.environ.get("RT_SCREENSHOT_DIR", tmp_path))
    if out_dir != tmp_path:
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, out_dir / "regress_report.png")
    # the compare panel switches to the actual image on click
    clicked = report / "clicked.html"
    clicked.write_text((report / "index.html").read_text().replace("</body>", (
        "<script>window.addEventListener('load', function () { var i = document.querySelector("
        "'figure.toggle img'); i.click(); document.body.dataset.toggled = i.getAttribute('src') + ' ' + "
        "i.parentNode.querySelector('figcaption').textContent; });</script></body>")))
    toggled = _browse(chromium, clicked.resolve().as_uri(), tmp_path, "--dump-dom")
    assert 'data-toggled="images/beta.actual.png actual (click to switch)"' in toggled.stdout
    # negative control: the same checks see a console error and an image that did not load
    broken = report / "broken.html"
    broken.write_text((report / "index.html").read_text().replace("images/alpha.diff.png", "images/nothing.png")
                      .replace("<script>", "<script>console.error('boom');", 1))
    bad = _browse(chromium, broken.resolve().as_uri(), tmp_path, "--dump-dom")
    assert re.search(r'data-images-loaded="(\d+)/(\d+)"', bad.stdout).groups() == ("11", "12")
    assert any("boom" in line for line in _console_errors(bad.stderr))
    # every scene's background colour (sRGB-encoded as in its images) is on the screen:
    # the images were decoded and drawn, not just listed
    from raytrace.image import to_8bit
    for name, color in COLORS.items():
        rgb = to_8bit(np.array([[color]], np.float32))[0, 0].astype(int)
        hits = (np.abs(pixels - rgb).max(axis=2) <= 2).sum()
        assert hits > 2000, (name, rgb, hits)          # several enlarged images of it


def test_path_traced_reference_judged_by_the_ztest(tmp_path, capsys):
    """A sidecar with "ztest": the reference is a float image with its variance; an
    independent render (another seed) passes, a wrong index of refraction fails."""
    from grade_scenes import ZTEST_SCENE, with_ior
    scenes, refs = tmp_path / "scenes", tmp_path / "refs"
    scenes.mkdir()
    refs.mkdir()
    small = {"width": 12, "height": 12, "filter": "box"}
    (scenes / "glass.json").write_text(json.dumps(dict(ZTEST_SCENE, image=small)))
    (refs / "glass.ref.json").write_text(json.dumps({"spp": 600, "seed": 1, "sampler": "independent",
                                                     "ztest": {}}))
    status, out, _ = regress(capsys, scenes, refs, "--update")
    assert status == 0 and re.search(r"^UPDATED +glass: reference rewritten \(was missing", out, re.M)
    side = json.loads((refs / "glass.ref.json").read_text())
    assert side["ztest"] == {"variance": "glass.var.exr", "spp": 600} and "tolerance" not in side
    assert (refs / "glass.exr").is_file() and (refs / "glass.var.exr").is_file()
    side["seed"] = 2
    (refs / "glass.ref.json").write_text(json.dumps(side))
    status, out, _ = regress(capsys, scenes, refs)
    assert status == 0 and re.search(r"^PASSED +glass: PASS: z-test ", out, re.M), out
    (scenes / "glass.json").write_text(json.dumps(dict(with_ior(1.33), image=small)))
    status, out, _ = regress(capsys, scenes, refs)
    assert status == 1 and re.search(r"^FAILED +glass: FAIL: z-test rejects", out, re.M), out


def test_summaries_after_update_say_what_happened(folders, capsys, tmp_path):
    """Rewritten references are no passes: the verdict, the report's heading and the
    counts line agree (no "all 3 passed" above "0 passed, 3 updated")."""
    scenes, refs = folders
    report = tmp_path / "report"
    status, out, _ = regress(capsys, scenes, refs, "--update", "--report", report)
    assert status == 0
    assert out.strip().splitlines()[-1] == "regress: UPDATED: 3 scenes, 0 passed, 3 updated (alpha, beta, gamma)"
    page = (report / "index.html").read_text()
    assert "<h1>raytrace regress: 3 references updated</h1>" in page
    assert "<title>raytrace regress: 3 references updated</title>" in page and "all 3 passed" not in page
    # one wrong reference, fixed by --update: one updated, the others passed
    raytrace.save_image(refs / "beta.png", raytrace.render(raytrace.load_scene(_scene(COLORS["beta"], 0.4))))
    status, out, _ = regress(capsys, scenes, refs, "--update", "--report", report)
    assert status == 0 and out.strip().splitlines()[-1] == "regress: UPDATED: 3 scenes, 2 passed, 1 updated (beta)"
    assert "<h1>raytrace regress: 2 passed, 1 reference updated</h1>" in (report / "index.html").read_text()
    status, out, _ = regress(capsys, scenes, refs, "--report", report)
    assert status == 0 and out.strip().splitlines()[-1] == "regress: PASS: 3 scenes, 3 passed"
    assert "<h1>raytrace regress: all 3 passed</h1>" in (report / "index.html").read_text()


def test_headline_counts_each_outcome():
    from raytrace.grade.regress import Case, headline, verdict

    def cases(*statuses):
        return [Case(name=f"s{k}", scene=pathlib.Path(f"s{k}.json"), status=s) for k, s in enumerate(statuses)]
    assert headline(cases("passed", "updated", "failed")) == "1 passed, 1 updated, 1 failed"
    assert verdict(cases("passed", "updated", "failed")) == "FAIL"
    assert headline(cases("updated", "updated")) == "2 references updated"
    assert verdict(cases("updated", "updated")) == "UPDATED"
    assert headline(cases("updated")) == "1 reference updated"
    assert headline(cases("passed", "passed")) == "all 2 passed" and verdict(cases("passed")) == "PASS"
    assert headline(cases("missing", "error", "error")) == "1 missing, 2 errors"
    assert headline(cases("error")) == "1 error" and verdict(cases("error")) == "FAIL"
