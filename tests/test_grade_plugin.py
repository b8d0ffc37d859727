"""The pytest plugin (``raytrace.grade.pytest_plugin``, fixture ``render_regression``),
run the way a user runs it: in a separate pytest session of a small project."""
import json
import pathlib
import tomllib

import imageio.v3 as iio
import numpy as np

pytest_plugins = ["pytester"]

SCENE = {
    "camera": {"center": [0, 1, 4], "look_at": [0, 0.5, 0], "fov": 40},
    "background": {"color": [0.2, 0.3, 0.5], "ambient": [0.1, 0.1, 0.1]},
    "materials": {"ball": {"diffuse": [0.9, 0.6, 0.2]}, "floor": {"diffuse": [0.5, 0.5, 0.5]}},
    "lights": [{"type": "point", "position": [2, 4, 3], "color": [1, 1, 1]}],
    "objects": [{"type": "sphere", "center": [0, 0.5, 0], "radius": 0.5, "material": "ball"},
                {"type": "plane", "normal": [0, 1, 0], "material": "floor"}],
}
TEST_FILE = """
def test_ball(render_regression):
    result = render_regression("scenes/ball.json", width=24, height=18, spp=1,
                               tolerance="mae<=1/255,over<=0.005")
    if result is not None:
        assert result.passed and result.metrics["max"] == 0.0
"""
PLUGIN = ("-p", "raytrace.grade.pytest_plugin")


def test_entry_point_is_declared():
    data = tomllib.loads((pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert data["project"]["entry-points"]["pytest11"] == {
        "raytrace.grade.pytest_plugin": "raytrace.grade.pytest_plugin"}


def test_fixture_update_pass_fail_and_summary(pytester):
    (pytester.path / "scenes").mkdir()
    (pytester.path / "scenes" / "ball.json").write_text(json.dumps(SCENE))
    pytester.makepyfile(test_ball=TEST_FILE)
    ref = pytester.path / "reference" / "ball.png"

    first = pytester.runpytest(*PLUGIN)
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*ball: no reference image*run pytest with --update-references*",
                                "*render regression*", "1 scene, 0 passed, 1 missing (ball)"])

    update = pytester.runpytest(*PLUGIN, "--update-references")
    update.assert_outcomes(passed=1)
    update.stdout.fnmatch_lines(["1 scene, 0 passed, 1 updated (ball)", "*UPDATED ball: wrote *ball.png"])
    assert iio.imread(ref).shape == (18, 24, 3)

    ok = pytester.runpytest(*PLUGIN)
    ok.assert_outcomes(passed=1)
    ok.stdout.fnmatch_lines(["*render regression*", "1 scene, 1 passed"])

    # a deliberately wrong reference: a bright square of 4 x 4 pixels
    img = iio.imread(ref)
    img[2:6, 2:6] = 255
    iio.imwrite(ref, img)
    results, report = pytester.path / "results", pytester.path / "report"
    bad = pytester.runpytest(*PLUGIN, f"--render-results={results}", f"--render-report={report}")
    bad.assert_outcomes(failed=1)
    bad.stdout.fnmatch_lines(["*ball: FAIL: mae * (limit <= 0.00392157); over 0.037037 (limit <= 0.005); actual, expected and diff images in*",
                              "1 scene, 0 passed, 1 failed (ball)", f"report: {report / 'index.html'}"])
    diff = iio.imread(results / "ball" / "diff.png")
    assert diff[3, 3].sum() > diff[10, 20].sum()
    assert np.array_equal(iio.imread(results / "ball" / "expected.png"), img)
    assert (report / "index.html").read_text().count('class="badge failed"') == 1


def test_reference_dir_ini_option(pytester):
    (pytester.path / "scenes").mkdir()
    (pytester.path / "scenes" / "ball.json").write_text(json.dumps(SCENE))
    pytester.makeini("[pytest]\nrender_reference_dir = refs/images\n")
    pytester.makepyfile(test_ball=TEST_FILE)
    pytester.runpytest(*PLUGIN, "--update-references").assert_outcomes(passed=1)
    assert (pytester.path / "refs" / "images" / "ball.png").is_file()
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=1)
