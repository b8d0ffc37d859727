"""Run every benchmark and gather their result files into benchmarks/RESULTS.md.

    python benchmarks/run_all.py            (or: make bench)
    python benchmarks/run_all.py --collect  (only rebuild RESULTS.md from results/*.md)

Each bench_*.py writes benchmarks/results/<part>.md with its machine, date and command.
"""
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ORDER = ["render", "bvh", "curves", "skinning", "particles"]


def collect():
    parts = sorted((HERE / "results").glob("*.md"),
                   key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else len(ORDER), p.stem))
    text = ["# Benchmark results", "",
            "Gathered from `benchmarks/results/*.md` by `python benchmarks/run_all.py`; each section",
            "names its command, machine and date. Benchmarks run by hand, never in CI.", ""]
    for p in parts:
        text += [p.read_text().rstrip(), ""]
    (HERE / "RESULTS.md").write_text("\n".join(text))
    print(f"wrote {HERE / 'RESULTS.md'} from {len(parts)} result files")


def main():
    if "--collect" not in sys.argv:
        for script in sorted(HERE.glob("bench_*.py")):
            print(f"== {script.name}", flush=True)
            subprocess.run([sys.executable, str(script)], check=True)
    collect()


if __name__ == "__main__":
    main()
