# Quick start:  make render   (renders scenes/showcase.json to renders/showcase.png)
#               make test     (runs the whole test suite, reference tools included)
# Each target creates .venv and installs what it needs on first use. Afterwards run the
# tools from the venv: `. .venv/bin/activate` (then `raytrace ...`, `python -m curves ...`)
# or call them as .venv/bin/raytrace, .venv/bin/python.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: render renders test bench prebuilt clean

# Installs go through uv (https://github.com/astral-sh/uv, a Rust pip: parallel downloads
# and unpacking; on 2026-12-01 `pip install -e .` took 23.2 s here and `uv pip install -e .`
# 3.9 s with an empty uv cache). uv itself comes from PyPI into the venv; where it cannot be
# had (no wheel for the platform, no network to PyPI) or fails, pip does the install
# instead. pip is upgraded only when it is too old for editable pyproject installs (21.3).
# Neither byte-compiles the dependencies up front (pip: --no-compile; uv by default):
# Python compiles the modules it imports on first use, not all 400 MB of them.
INSTALL = $(BIN)/uv pip install -q --python $(BIN)/python $(1) || \
	  { echo "uv unavailable: installing with pip"; $(BIN)/pip install -q --no-compile $(1); }

$(VENV)/.installed-run: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -c "import pip, sys; sys.exit(tuple(map(int, pip.__version__.split('.')[:2])) < (21, 3))" || \
	  $(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q uv || true
	$(call INSTALL,-e .)
	touch $@

TEST_EXTRAS := .[reference,test,denoise]
$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed-run
	$(call INSTALL,-e '$(TEST_EXTRAS)')
	touch $@

render: $(VENV)/.installed-run
	$(BIN)/raytrace render scenes/showcase.json -o renders/showcase.png

# every image the README shows (tests/test_renders_current.py checks they are current)
renders: $(VENV)/.installed-run
	$(BIN)/python scripts/render_all.py

# the compiled kernels shipped in */prebuilt/, rebuilt at release points (a version without
# .dev in pyproject.toml; tests/test_prebuilt.py fails while a release's bundle is stale); 2-4 min
prebuilt: $(VENV)/.installed-run
	$(BIN)/python scripts/prebuild_kernels.py

# -n auto: one pytest-xdist worker per core (a test file stays on one worker); the tests'
# conftest compiles both integrators into the Numba cache first. Kernels cache where the
# commands' do (~/.cache/raytrace-numba, or $NUMBA_CACHE_DIR), so neither compiles for the
# other. Nothing outside the checkout and that cache is changed: a test that needs a system
# tool (the HTML report's browser test: chromium) skips with the reason where it is missing.
test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n auto --dist loadfile

# 15 minutes to over an hour; reports go to benchmarks/output/ (ignored). To update the committed
# benchmarks/RESULTS.md: .venv/bin/python benchmarks/run_all.py --record
bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) tests/output benchmarks/output
