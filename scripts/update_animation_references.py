"""Re-render the animation regression frame in tests/reference/animation/.

    python scripts/update_animation_references.py

Only run this after checking by eye that a change to the picture is intended; the test
``tests/test_animation_scene.py::test_regression_frame`` compares against it.
"""
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import raytrace  # noqa: E402
from test_animation_scene import REFERENCE, render_reference_frame  # noqa: E402


def main():
    REFERENCE.mkdir(parents=True, exist_ok=True)
    image = render_reference_frame()
    path = REFERENCE / "walk_0012.png"
    raytrace.save_image(path, image)
    print(f"wrote {path} {image.shape[1]}x{image.shape[0]}")


if __name__ == "__main__":
    main()
