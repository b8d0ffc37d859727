"""benchmarks/bench_readme.py without timing anything: the commands it would run (they
parse with the real CLI, name shipped scenes and are the README's example), how it
reads the CLI's compile notice, and the report it writes."""
import os
import pathlib
import re
import shlex
import sys
import tempfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import bench_readme  # noqa: E402

from raytrace.cli import _parser  # noqa: E402

RT = ["raytrace"]


def test_raytrace_argv_prefers_the_console_script(tmp_path):
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.write_text("")
    assert bench_readme.raytrace_argv(python) == [str(python), "-m", "raytrace"]
    script = python.with_name("raytrace")
    script.write_text("#!/bin/sh\n")
    assert bench_readme.raytrace_argv(python) == [str(python), "-m", "raytrace"]   # not executable
    script.chmod(0o755)
    assert bench_readme.raytrace_argv(python) == [str(script)]


def test_commands_parse_with_the_real_cli(tmp_path):
    render = bench_readme.render_argv(RT, "showcase", tmp_path / "a.png", (64, 48), spp=1)
    args = _parser().parse_args(render[1:])
    assert (args.command, args.scene, args.size, args.spp) == ("render", "scenes/showcase.json", [64, 48], 1)
    assert args.output == str(tmp_path / "a.png")
    assert _parser().parse_args(bench_readme.render_argv(RT, "spheres", "x.png", (800, 800))[1:]).spp is None
    for workers in (None, 1):
        args = _parser().parse_args(bench_readme.animate_argv(RT, tmp_path / "o", workers)[1:])
        assert (args.command, args.frames, args.size, args.workers) == ("animate", "0:8", [160, 120], workers)
    with pytest.raises(SystemExit):           # the control: the parser does refuse a bad command
        _parser().parse_args(["render", "scenes/showcase.json", "--size", "64"])


def test_the_animation_command_is_the_readmes():
    readme = (REPO / "README.md").read_text()
    shown = bench_readme.shown(bench_readme.animate_argv(RT, "out/orbit"), RT)
    assert shown in readme
    assert bench_readme.shown(bench_readme.animate_argv(RT, "out/orbit", 1), RT) not in readme


def test_scenes_exist_and_cover_both_integrators():
    for scene in bench_readme.FIRST_SCENES + [bench_readme.WARM_SCENE]:
        assert (REPO / "scenes" / f"{scene}.json").is_file(), scene
    assert set(bench_readme.QUICK_SCENES) < set(bench_readme.FIRST_SCENES)
    kinds = {s: bench_readme.integrator_of(s) for s in bench_readme.FIRST_SCENES}
    assert kinds["showcase"] == "whitted" and kinds["cornell_box"] == "path"
    assert {"whitted", "path"} == set(kinds.values())


def test_compile_notice_is_read_from_the_clis_lines():
    compiled = ("raytrace: compiling 3 kernels, first run here (cached afterwards) ...\n"
                "raytrace: 3 kernels compiled in 48.3 s\n"
                "wrote out/x.png (9.12 s render, 50.1 s compiling kernels)\n")
    assert bench_readme.compile_seconds(compiled) == 50.1
    assert bench_readme.compile_seconds("raytrace: kernels compiled in 7.5 s\n") == 7.5
    assert bench_readme.compile_seconds("wrote out/x.png (1.23 s)\n") is None
    assert bench_readme.kernel_note(None) == "shipped kernels"
    assert bench_readme.kernel_note(50.1) == "kernels compiled: 50 s of it"


def test_spread_and_shown():
    assert bench_readme.spread([1.0, 3.0, 2.0]) == "median 2.00 s (1.00-3.00 s, 3 runs)"
    assert bench_readme.spread([1.5]) == "1.50 s"
    tmp = os.path.join(tempfile.gettempdir(), "bench_readme_abc")
    argv = ["/venv/bin/raytrace", "render", "scenes/a.json", "-o", f"{tmp}/a b.png"]
    assert bench_readme.shown(argv, ["/venv/bin/raytrace"]) == "raytrace render scenes/a.json -o 'OUT/a b.png'"
    assert bench_readme.shown(["py", "-m", "raytrace", "--help"], ["py", "-m", "raytrace"]) == "raytrace --help"


def test_command_line_leaves_out_the_report_path():
    assert bench_readme.command_line(["--quick", "--out", "x.md"]) == "python benchmarks/bench_readme.py --quick"
    assert bench_readme.command_line(["--out=x.md", "--no-animate"]) == \
        "python benchmarks/bench_readme.py --no-animate"
    assert bench_readme.command_line([]) == "python benchmarks/bench_readme.py"


FACTS = {"date": "2026-12-02 17:00 UTC", "cpu": "AMD EPYC", "isa": "AVX-512", "cores": 2,
         "python": "3.11.7", "numba": "0.68.1"}
ROWS = [("`raytrace --help`", "median 0.50 s (0.40-0.60 s, 5 runs)", "raytrace --help"),
        ("first render", "2.00 s (shipped kernels)", "raytrace render scenes/showcase.json -o OUT/s.png")]


def test_report_names_date_machine_and_load():
    text = bench_readme.format_report(FACTS, ROWS, "python benchmarks/bench_readme.py", "other processes "
                                      "used 0.01 cores", 0.5, 1.25, busy=False, seconds=61.4)
    assert "2026-12-02 17:00 UTC; AMD EPYC (AVX-512), 2 cores; Python 3.11.7, Numba 0.68.1" in text
    assert "other processes used 0.01 cores; load average 0.50 before, 1.25 after" in text
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert table[0] == "| what | figure | command |"
    assert table[1:] == [f"| {a} | {b} | `{c}` |" for a, b, c in ROWS]
    assert "The whole run took 61 s." in text
    assert "Not a quiet machine" not in text
    busy = bench_readme.format_report(FACTS, ROWS, "x", "other processes used 1.30 cores", 2.0, 3.0, busy=True)
    assert "**Not a quiet machine**: other processes used 1.30 cores" in busy


def test_main_writes_the_report_where_asked(tmp_path, monkeypatch, capsys):
    seen = {}

    def fake_measure(quick, animate, log=print):
        seen.update(quick=quick, animate=animate)
        return ROWS, FACTS, "other processes used 0.00 cores", 0.1, 0.2, False, 3.0

    monkeypatch.setattr(bench_readme, "measure", fake_measure)
    out = tmp_path / "r" / "figures.md"
    bench_readme.main(["--quick", "--no-animate", "--out", str(out)])
    assert seen == {"quick": True, "animate": False}
    text = out.read_text()
    assert "Command: `python benchmarks/bench_readme.py --quick --no-animate`" in text
    assert text in capsys.readouterr().out
    assert re.search(r"^\| first render \| 2\.00 s", text, re.M)
    assert bench_readme.DEFAULT_OUT.relative_to(REPO).as_posix() == "benchmarks/output/readme_figures.md"
    assert "benchmarks/output/" in (REPO / ".gitignore").read_text().split()
    assert shlex.split(bench_readme.command_line(["--quick"]))[1] == "benchmarks/bench_readme.py"
