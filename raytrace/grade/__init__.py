"""Grading renders against references: image metrics, a per-pixel z-test for Monte Carlo
images, folder regression runs, a pytest fixture and convergence plots.

    from raytrace import grade
    result = grade.compare("student.png", "solution.png")            # paths, arrays or GradeImage
    print(result.metrics["rmse"], result.passed)
    result = grade.compare("a.exr", "ref.exr", criteria="relmse<=0.01")

The command line (``raytrace compare``, ``raytrace regress``, ``raytrace convergence``)
and the pytest plugin (fixture ``render_regression``) are thin layers over the same
functions; ``docs/grading.md`` describes the metrics, the z-test and the file formats.

Modules, one job each: :mod:`.images` (reading PNG/PFM/EXR/NumPy files),
:mod:`.metrics` (the numbers), :mod:`.ssim`, :mod:`.flip` (NVIDIA's FLIP through
``flip_evaluator``), :mod:`.criteria` (tolerances), :mod:`.compare` (one comparison),
:mod:`.ztest`, :mod:`.heatmap` (pictures of differences), :mod:`.sidecar` (reference
settings), :mod:`.regress`, :mod:`.report_html`, :mod:`.junit`, :mod:`.convergence`,
:mod:`.cli`, :mod:`.pytest_plugin`.
"""
from userio.lazy import lazy_package as _lazy_package

from .errors import GradeError

# imported on first use: ``raytrace compare --help`` stays light (userio.lazy)
_lazy_package(__name__, {
    "compare": (".compare", "compare"),
    "Comparison": (".compare", "Comparison"),
    "Criterion": (".criteria", "Criterion"),
    "parse_criteria": (".criteria", "parse_criteria"),
    "DEFAULT_CRITERIA": (".criteria", "DEFAULT_CRITERIA"),
    "GradeImage": (".images", "GradeImage"),
    "read_image": (".images", "read_image"),
    "ztest": (".ztest", "ztest"),
    "ZTestResult": (".ztest", "ZTestResult"),
})

__all__ = ["compare", "Comparison", "Criterion", "parse_criteria", "DEFAULT_CRITERIA", "GradeError",
           "GradeImage", "read_image", "ztest", "ZTestResult"]
