"""Render every scene in scenes/ to renders/<name>.png at the scene's own settings.

    python scripts/render_all.py [NAME ...]     (or: make renders)

These are the images the README shows. A scene that needs data from ../shared (the
course files) is skipped with a message when that data is absent.
"""
import pathlib
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import raytrace  # noqa: E402


def main(names):
    out = REPO / "renders"
    failed = 0
    for path in sorted((REPO / "scenes").glob("*.json")):
        if names and path.stem not in names:
            continue
        t0 = time.perf_counter()
        try:
            scene = raytrace.load_scene(path)
        except raytrace.SceneError as exc:
            if "../shared" in str(exc) or "shared/" in str(exc):
                print(f"skip {path.name}: {exc}")
                continue
            print(f"error: {exc}")
            failed += 1
            continue
        image = raytrace.render(scene, progress=sys.stderr.isatty())
        raytrace.save_image(out / f"{path.stem}.png", image)
        print(f"wrote renders/{path.stem}.png ({time.perf_counter() - t0:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
