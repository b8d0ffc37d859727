"""Re-render the regression references in tests/reference/ from the scenes in scenes/.

    python scripts/update_reference_images.py [SCENE_NAME ...]

Only run this after checking by eye that a change to the pictures is intended; the
regression test (tests/test_regression.py) compares against these files.
"""
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import raytrace  # noqa: E402
from test_regression import REFERENCE_DIR, regression_scenes, small_render  # noqa: E402


def main(names):
    REFERENCE_DIR.mkdir(parents=True, exist_ok=True)
    for path in regression_scenes():
        if names and path.stem not in names:
            continue
        image = small_render(path)
        raytrace.save_image(REFERENCE_DIR / f"{path.stem}.png", image)
        print(f"wrote {REFERENCE_DIR / (path.stem + '.png')} {image.shape[1]}x{image.shape[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
