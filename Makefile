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

OLDEST_NUMBA := numba==0.61.2 llvmlite==0.44.0
OLDEST := .venv-oldest-numba
KERNEL_TESTS := tests/test_jit_cache.py tests/test_jit_isolation.py tests/test_numba_inline.py \
	tests/test_compile_cache.py tests/test_compile_keys.py tests/test_borrow.py tests/test_simd.py \
	tests/test_regression.py tests/test_path_integrator.py tests/test_media_closed_forms.py \
	tests/test_bsdf.py tests/test_shading.py tests/test_curves.py tests/test_skinning.py \
	tests/test_particles_integrators.py tests/test_late_binding.py
$(OLDEST)/.installed: pyproject.toml
	$(PYTHON) -m venv $(OLDEST)
	$(OLDEST)/bin/pip install -q uv || true
	$(OLDEST)/bin/uv pip install -q --python $(OLDEST)/bin/python $(OLDEST_NUMBA) -e '.[reference,test]' || \
	  { echo "uv unavailable: installing with pip"; $(OLDEST)/bin/pip install -q --no-compile $(OLDEST_NUMBA) -e '.[reference,test]'; }
	touch $@

render: $(VENV)/.installed-run
	$(BIN)/raytrace render scenes/showcase.json -o renders/showcase.png

# every image the README shows (tests/test_renders_current.py checks they are current)
renders: $(VENV)/.installed-run
	$(BIN)/python scripts/render_all.py

# the compiled kernels shipped in raytrace/prebuilt/, rebuilt at release points (a version without
# .dev in pyproject.toml; tests/test_prebuilt.py fails while a release's bundle is stale); 2-4 min
prebuilt: $(VENV)/.installed-run
	$(BIN)/python scripts/prebuild_kernels.py

# -n auto: one pytest-xdist worker per core (a test file stays on one worker); the tests'
# conftest compiles both integrators into the Numba cache first. Kernels cache where the
# commands' do (~/.cache/raytrace-numba, or $NUMBA_CACHE_DIR), so neither compiles for the
# other. Nothing outside the checkout and that cache is changed: a test that needs a system
# tool (the HTML report's browser test: chromium) skips with the reason where it is missing.
#
# Then the kernels' tests again in a second environment with the oldest Numba and llvmlite
# pyproject.toml allows (OLDEST_NUMBA: its lower bounds, checked by tests/test_structure.py),
# so both ends of the allowed range are tested; its own .venv-oldest-numba.
test: $(VENV)/.installed-test $(OLDEST)/.installed
	$(BIN)/python -m pytest -q -n auto --dist loadfile
	$(OLDEST)/bin/python -m pytest -q -n auto --dist loadfile $(KERNEL_TESTS)

# 15 minutes to over an hour; reports go to benchmarks/output/ (ignored). To update the committed
# benchmarks/RESULTS.md: .venv/bin/python benchmarks/run_all.py --record
bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) $(OLDEST) tests/output benchmarks/output
