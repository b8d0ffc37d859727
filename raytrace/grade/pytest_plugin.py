"""pytest plugin: the ``render_regression`` fixture, for image-regression tests of scenes.

Installed with the package (entry point ``pytest11``), so any project that has
``raytrace-toolkit`` installed can write::

    def test_my_scene(render_regression):
        render_regression("scenes/my_scene.json", width=160, height=120, spp=16,
                          tolerance="mae<=1/255,over<=0.02,block<=4/255")

The fixture renders the scene (``raytrace.render`` keyword settings), compares it with
the reference ``<reference dir>/<name>.png`` (or an existing ``.exr``/``.pfm``; ``name``
defaults to the scene file's stem) through :func:`raytrace.grade.compare` and fails the
test, naming the metrics over their limits, when it is not within tolerance; actual,
expected and difference images are then written to the results folder. It returns the
:class:`~raytrace.grade.compare.Comparison`. ``render_regression.check(image, name=...)``
grades an image rendered by the test itself.

Options: ``--update-references`` writes the references from the renders instead of
comparing (the tests pass and the summary lists what was written); ``--render-report
DIR`` writes the HTML report of ``raytrace regress`` for the checks of the run;
``--render-results DIR`` chooses where images of failed checks go (default: a folder
in pytest's temporary directory). The ini option ``render_reference_dir`` (relative to
the rootdir) sets the references folder; by default it is ``reference/`` beside each
test file. A summary of the checks is printed at the end of the run.

Loading the plugin imports the ``raytrace`` package (and Numba) but compiles nothing;
``-p no:raytrace.grade.pytest_plugin`` turns it off.
"""
import pathlib
import time

import pytest

_CASES = pytest.StashKey[list]()
_REFERENCE_SUFFIXES = (".png", ".exr", ".pfm")


def pytest_addoption(parser):
    group = parser.getgroup("render_regression", "raytrace render regression (fixture render_regression)")
    group.addoption("--update-references", action="store_true", default=False,
                    help="write reference images from the renders instead of comparing")
    group.addoption("--render-report", metavar="DIR", default=None,
                    help="write an HTML report of the render_regression checks to DIR/index.html")
    group.addoption("--render-results", metavar="DIR", default=None,
                    help="folder for actual / expected / difference images of failed checks")
    parser.addini("render_reference_dir", "folder of reference images for render_regression, relative to "
                                          "the rootdir (default: 'reference' beside each test file)")


def pytest_configure(config):
    config.stash[_CASES] = []


class RenderRegression:
    """The ``render_regression`` fixture's value: call it with a scene, or use
    :meth:`check` with an image."""

    def __init__(self, request):
        self._request = request
        self._config = request.config

    def __call__(self, scene, name=None, tolerance=None, metric=None, threshold=None, reference=None,
                 reference_dir=None, alpha="error", **settings):
        """Render ``scene`` (a path, a scene dict or a loaded Scene) with ``settings``
        (``width``, ``height``, ``spp``, ``seed``, ... as for ``raytrace.render``) and
        :meth:`check` the image."""
        import raytrace
        path = None
        if isinstance(scene, (str, pathlib.Path)):
            path = pathlib.Path(scene)
            if not path.is_absolute():
                path = pathlib.Path(self._config.rootpath) / path
            scene = raytrace.load_scene(path)
        elif isinstance(scene, dict):
            scene = raytrace.load_scene(scene)
        elif getattr(scene, "path", None):
            path = pathlib.Path(scene.path)
        if name is None:
            if path is None:
                raise ValueError("render_regression: give name= for a scene that is not a file")
            name = path.stem
        image = raytrace.render(scene, **settings)
        return self.check(image, name=name, tolerance=tolerance, metric=metric, threshold=threshold,
                          reference=reference, reference_dir=reference_dir, alpha=alpha, scene=path)

    def reference_dir(self):
        ini = self._config.getini("render_reference_dir")
        if ini:
            return pathlib.Path(self._config.rootpath) / ini
        return pathlib.Path(self._request.path).parent / "reference"

    def _reference_path(self, name, reference, reference_dir):
        folder = pathlib.Path(reference_dir) if reference_dir is not None else self.reference_dir()
        if reference is not None:
            ref = pathlib.Path(reference)
            return ref if ref.is_absolute() else folder / ref
        found = [folder / f"{name}{s}" for s in _REFERENCE_SUFFIXES if (folder / f"{name}{s}").exists()]
        return found[0] if found else folder / f"{name}.png"

    def check(self, image, name, tolerance=None, metric=None, threshold=None, reference=None,
              reference_dir=None, alpha="error", scene=None):
        """Grade ``image`` (a render or an array) against the reference ``name`` ->
        Comparison (None with ``--update-references``). Fails the test when over
        tolerance or when the reference is missing."""
        from ..image import encode_image
        from .compare import compare
        from .criteria import DEFAULT_CRITERIA, parse_criteria
        from .metrics import DEFAULT_THRESHOLD
        from .regress import Case

        t0 = time.perf_counter()
        ref = self._reference_path(name, reference, reference_dir)
        criteria = DEFAULT_CRITERIA if tolerance is None else parse_criteria(tolerance, metric)
        case = Case(name=name, scene=scene or pathlib.Path(self._request.node.nodeid), reference=ref,
                    image=image, criteria=", ".join(str(c) for c in criteria))
        info = getattr(image, "info", None)
        if info is not None:
            case.settings = {"width": info.width, "height": info.height, "spp": info.spp, "seed": info.seed,
                             "integrator": info.integrator}
        self._config.stash[_CASES].append(case)
        if self._config.getoption("update_references"):
            from userio.outputs import write_bytes_atomic
            write_bytes_atomic(ref, encode_image(ref, image))
            case.status, case.message = "updated", f"wrote {ref}"
            case.seconds = time.perf_counter() - t0
            return None
        if not ref.exists():
            case.status, case.message = "missing", f"no reference image {ref}"
            case.seconds = time.perf_counter() - t0
            pytest.fail(f"{name}: no reference image {ref}; run pytest with --update-references to create it",
                        pytrace=False)
        result = compare(image, ref, criteria=criteria,
                         threshold=DEFAULT_THRESHOLD if threshold is None else threshold, alpha=alpha)
        case.comparison = result
        case.status = "passed" if result.passed else "failed"
        case.message = result.verdict()
        case.seconds = time.perf_counter() - t0
        if not result.passed:
            folder = self._write_failure_images(name, result)
            pytest.fail(f"{name}: {result.verdict()}; actual, expected and diff images in {folder}",
                        pytrace=False)
        return result

    def _write_failure_images(self, name, result):
        from userio.outputs import write_bytes_atomic

        from . import heatmap
        option = self._config.getoption("render_results")
        base = pathlib.Path(option) if option else \
            self._request.getfixturevalue("tmp_path_factory").getbasetemp() / "render-regression"
        folder = base / name
        rgb, _ = heatmap.diff_heatmap(result.diff)
        for kind, data in (("actual", heatmap.preview(result.actual)),
                           ("expected", heatmap.preview(result.expected)), ("diff", rgb)):
            write_bytes_atomic(folder / f"{kind}.png", heatmap.png_bytes(data))
        return folder


@pytest.fixture
def render_regression(request):
    """Render a scene and compare it with its reference image (see the plugin's docs)."""
    return RenderRegression(request)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    cases = config.stash.get(_CASES, [])
    if not cases:
        return
    from .regress import ordered, summary
    tr = terminalreporter
    tr.section("render regression")
    tr.write_line(summary(cases))
    for case in ordered(cases):
        if case.status != "passed":
            tr.write_line(f"  {case.status.upper()} {case.name}: {case.message}")
    report = config.getoption("render_report")
    if report:
        from .report_html import write_report
        tr.write_line(f"report: {write_report(cases, report, title='render regression')}")
