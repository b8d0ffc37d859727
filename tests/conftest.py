"""Shared fixtures: where the read-only course data lives, and an output folder."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("RT_SHARED_DIR", REPO.parent / "shared"))
OUTPUT = REPO / "tests" / "output"


def shared_path(*parts):
    """Path into ../shared, or skip the test when that file is not there."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} not present (../shared is optional)")
    return p


@pytest.fixture
def output_dir(request):
    """A per-test folder under tests/output (ignored by git) for images a test writes."""
    d = OUTPUT / request.node.name.replace("/", "_").replace("[", "_").replace("]", "")
    d.mkdir(parents=True, exist_ok=True)
    return d

# the render_regression fixture (also registered by the package's pytest11 entry point
# under this same name, so loading it twice is harmless)
pytest_plugins = ["raytrace.grade.pytest_plugin"]
