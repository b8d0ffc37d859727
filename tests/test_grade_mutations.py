"""The default grade catches student bugs and passes honest re-renders.

Each mutation of ``tests/grade_mutations.py`` (a halved or missing specular term, a
missing light, no shadow-ray offset, normals not inverse-transposed, sRGB applied twice,
an inverted refraction index, a camera off by half a pixel, ...) is applied to a copy of
the package; the showcase rendered from it must fail ``raytrace compare`` against
``renders/showcase.png`` with the default criteria, while the unedited code rendering
with another seed (other anti-aliasing jitter) or on one thread must pass. The numbers
behind the default rule: ``scripts/mutation_study.py`` and docs/grading.md."""
import os
import pathlib
import subprocess
import sys

import pytest

import grade_mutations
from raytrace.grade import compare
from raytrace.grade.criteria import DEFAULT_CRITERIA

REPO = pathlib.Path(__file__).resolve().parents[1]
SCENE = REPO / "scenes" / "showcase.json"
REFERENCE = REPO / "renders" / "showcase.png"


def render(root, out, *extra, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("RAYTRACE_")}
    e.update(env or {}, PYTHONPATH=str(root))
    r = subprocess.run([sys.executable, "-m", "raytrace", "render", str(SCENE), "-o", str(out), "-q", *extra],
                       env=e, capture_output=True, text=True, timeout=900, cwd=out.parent)
    assert r.returncode == 0, r.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    return grade_mutations.copy_packages(REPO, tmp_path_factory.mktemp("mutants"))


@pytest.mark.parametrize("name", list(grade_mutations.MUTATIONS))
def test_each_student_bug_fails_the_default_grade(copy, tmp_path, name):
    originals = grade_mutations.apply(copy, grade_mutations.MUTATIONS[name])
    try:
        out = render(copy, tmp_path / "mutant.png")
    finally:
        grade_mutations.undo(originals)
    result = compare(out, REFERENCE, criteria=DEFAULT_CRITERIA, flip=False)
    assert not result.passed, f"{name}: {result.metrics}"


@pytest.mark.parametrize("extra, env", [(("--seed", "2"), {}), ((), {"NUMBA_NUM_THREADS": "1"})],
                         ids=["another seed", "one thread"])
def test_honest_re_renders_pass_the_default_grade(tmp_path, extra, env):
    out = render(REPO, tmp_path / "again.png", *extra, env=env)
    result = compare(out, REFERENCE, criteria=DEFAULT_CRITERIA, flip=False)
    assert result.passed, result.metrics
    if extra:                                  # another seed: the noise is there, and passes
        assert result.metrics["over"] > 0.001 and result.metrics["block"] > 0.0
