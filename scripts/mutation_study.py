"""How the default grade sees student bugs and honest re-renders of the showcase.

    python scripts/mutation_study.py [--out benchmarks/output/mutations] [--saved]

Renders ``scenes/showcase.json`` (the README's Whitted showcase) from a copy of the
package with each mutation of ``tests/grade_mutations.py`` applied, and from the unedited
code with other seeds (2, 3, 4) and with one thread, and compares each PNG with
``renders/showcase.png``: every metric of ``raytrace compare``, the share of pixels over
several thresholds, and whether the default grade passes. Prints the table of
``docs/grading.md``. Each render runs in a fresh process sharing the kernel cache (a
mutation compiles the kernels it touches, a few seconds). ``--saved`` prints the table
from the PNGs a previous run left in ``--out`` without rendering.
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import grade_mutations  # noqa: E402
from raytrace.grade import compare  # noqa: E402
from raytrace.grade.criteria import DEFAULT_CRITERIA  # noqa: E402

SCENE = REPO / "scenes" / "showcase.json"
REFERENCE = REPO / "renders" / "showcase.png"
THRESHOLDS = (2, 4, 8)


def render_showcase(root, out, *extra, env=None):
    """Render the showcase with the package at ``root`` into ``out`` (PNG)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("RAYTRACE_")}
    e.update(env or {}, PYTHONPATH=str(root))
    r = subprocess.run([sys.executable, "-m", "raytrace", "render", str(SCENE), "-o", str(out), "-q", *extra],
                       env=e, capture_output=True, text=True, timeout=900, cwd=root)
    if r.returncode != 0:
        raise SystemExit(f"render failed ({out.name}): {r.stderr.strip()[-2000:]}")
    return out


def row(name, png):
    c = compare(png, REFERENCE, criteria=DEFAULT_CRITERIA, flip=False)
    m = c.metrics
    over = {t: m["over"] if t == 8 else compare(png, REFERENCE, criteria=DEFAULT_CRITERIA, threshold=t / 255,
                                                     flip=False).metrics["over"] for t in THRESHOLDS}
    return (name, m["mae"] * 255, m["rmse"] * 255, m["max"] * 255, m["block"] * 255, over, m["ssim"], c.passed)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=pathlib.Path, default=REPO / "benchmarks" / "output" / "mutations")
    p.add_argument("--saved", action="store_true", help="use the PNGs a previous run left in --out")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.saved:
        render = lambda root, out, *extra, env=None: out      # noqa: E731 - the file is there
    else:
        render = render_showcase
    rows = []
    for seed in (2, 3, 4):
        rows.append(row(f"re-render, seed {seed}", render(REPO, args.out / f"seed{seed}.png", "--seed", str(seed))))
    rows.append(row("re-render, 1 thread", render(REPO, args.out / "threads1.png", env={"NUMBA_NUM_THREADS": "1"})))
    with tempfile.TemporaryDirectory() as tmp:
        root = grade_mutations.copy_packages(REPO, tmp)
        for name, edits in grade_mutations.MUTATIONS.items():
            originals = grade_mutations.apply(root, edits)
            try:
                out = render(root, args.out / (name.replace(" ", "_") + ".png"))
            finally:
                grade_mutations.undo(originals)
            rows.append(row(name, out))
    print("| render | mae (codes) | rmse (codes) | max (codes) | block (codes) | "
          + " | ".join(f"over {t}/255" for t in THRESHOLDS) + " | ssim | default grade |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(THRESHOLDS) + "---:|---|")
    for name, mae, rmse, mx, block, over, ssim, passed in rows:
        print(f"| {name} | {mae:.3f} | {rmse:.2f} | {mx:.0f} | {block:.1f} | "
              + " | ".join(f"{100 * over[t]:.3f} %" for t in THRESHOLDS)
              + f" | {ssim:.5f} | {'pass' if passed else 'FAIL'} |")


if __name__ == "__main__":
    main()
