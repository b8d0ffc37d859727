"""Render every scene in scenes/ to renders/<name>.png at the scene's own settings.

    python scripts/render_all.py [NAME ...]     (or: make renders)

These are the images the README shows; tests/test_renders_current.py checks that the
committed ones are what this script produces. A scene that needs data from ../shared
(the course files) is skipped with a message when that data is absent.
"""
import pathlib
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import raytrace  # noqa: E402

SCENES = REPO / "scenes"
RENDERS = REPO / "renders"


def needs_absent_shared_data(exc):
    """True when a SceneError says a file under ../shared is missing."""
    return "../shared" in str(exc) or "shared/" in str(exc)


def render_scene(path):
    """The image ``make renders`` writes for scene ``path``: (H, W, 3) float32, linear.

    Raises ``raytrace.SceneError`` (check ``needs_absent_shared_data``) on load errors.
    """
    scene = raytrace.load_scene(path)
    return raytrace.render(scene, progress=sys.stderr.isatty())


def main(names):
    failed = 0
    for path in sorted(SCENES.glob("*.json")):
        if names and path.stem not in names:
            continue
        t0 = time.perf_counter()
        try:
            image = render_scene(path)
        except raytrace.SceneError as exc:
            if needs_absent_shared_data(exc):
                print(f"skip {path.name}: {exc}")
                continue
            print(f"error: {exc}")
            failed += 1
            continue
        raytrace.save_image(RENDERS / f"{path.stem}.png", image)
        print(f"wrote renders/{path.stem}.png ({time.perf_counter() - t0:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
