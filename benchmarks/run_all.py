"""Run every benchmark and gather their reports into one Markdown file.

    python benchmarks/run_all.py            (or: make bench)   15 minutes to over an hour
    python benchmarks/run_all.py --record   the same, and record the results (see below)
    python benchmarks/run_all.py --collect  only rebuild benchmarks/RESULTS.md from results/*.md

Each bench_*.py writes its report to benchmarks/output/results/<part>.md (ignored by
git); this script gathers this run's reports into benchmarks/output/RESULTS.md. With
``--record`` the scripts also write the committed benchmarks/results/<part>.md and this
script rebuilds the committed benchmarks/RESULTS.md from them. A benchmark whose data or
tool is missing (../shared, Mitsuba, Embree) says so and is left out.
"""
import argparse
import pathlib
import subprocess
import sys
import time

from reports import OUTPUT, RECORDED, REPO

HERE = pathlib.Path(__file__).resolve().parent
ORDER = ["render", "bvh", "curves", "skinning", "particles"]
DURATION = ("15 minutes to over an hour on 2 cores, most of it bench_path.py against "
            "Mitsuba on two scenes (its first run also renders their 8192-spp Mitsuba "
            "references, about 15 minutes)")


def collect(folder, target):
    """Concatenate folder/*.md (in ORDER, then by name) into ``target``."""
    parts = sorted(folder.glob("*.md"),
                   key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else len(ORDER), p.stem))
    source = folder.relative_to(REPO).as_posix()
    command = "python benchmarks/run_all.py" + (" --record" if folder == RECORDED else "")
    text = ["# Benchmark results", "",
            f"Gathered from `{source}/*.md` by `{command}`;",
            "each section names its command, machine and date. Benchmarks run by hand, never in CI.",
            ""]
    for p in parts:
        text += [p.read_text().rstrip(), ""]
    target.write_text("\n".join(text))
    print(f"wrote {target.relative_to(REPO)} from {len(parts)} result files")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", action="store_true",
                    help="record: also write benchmarks/results/*.md and benchmarks/RESULTS.md "
                         "(committed files)")
    ap.add_argument("--collect", action="store_true",
                    help="run nothing; rebuild benchmarks/RESULTS.md from benchmarks/results/*.md")
    args = ap.parse_args(argv)
    if args.collect:
        collect(RECORDED, HERE / "RESULTS.md")
        return 0
    print(f"Running every benchmark: {DURATION}.", flush=True)
    print("Reports go to benchmarks/output/" + (" and, recorded, to benchmarks/results/ and "
          "benchmarks/RESULTS.md" if args.record else " (add --record to update the "
          "committed benchmarks/RESULTS.md)") + ".", flush=True)
    for old in OUTPUT.glob("*.md"):                 # this run's reports only
        old.unlink()
    failed = []
    t0 = time.perf_counter()
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        cmd = [sys.executable, str(script)] + (["--record"] if args.record else [])
        if subprocess.run(cmd).returncode != 0:
            failed.append(script.name)
    OUTPUT.mkdir(parents=True, exist_ok=True)
    collect(OUTPUT, HERE / "output" / "RESULTS.md")
    if args.record:
        collect(RECORDED, HERE / "RESULTS.md")
    print(f"all benchmarks: {(time.perf_counter() - t0) / 60:.1f} minutes")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
