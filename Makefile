# Quick start:  make render   (renders scenes/showcase.json to renders/showcase.png)
#               make test     (runs the whole test suite, reference tools included)
# Each target creates .venv and installs what it needs on first use. Afterwards run the
# tools from the venv: `. .venv/bin/activate` (then `raytrace ...`, `python -m curves ...`)
# or call them as .venv/bin/raytrace, .venv/bin/python.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export NUMBA_CACHE_DIR ?= $(CURDIR)/.cache/numba

.PHONY: render renders test bench clean

$(VENV)/.installed-run: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed-run
	$(BIN)/pip install -q -e '.[reference,test]'
	touch $@

render: $(VENV)/.installed-run
	$(BIN)/raytrace render scenes/showcase.json -o renders/showcase.png

# every image the README shows (tests/test_renders_current.py checks they are current)
renders: $(VENV)/.installed-run
	$(BIN)/python scripts/render_all.py

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q

# 15 minutes to over an hour; reports go to benchmarks/output/ (ignored). To update the committed
# benchmarks/RESULTS.md: .venv/bin/python benchmarks/run_all.py --record
bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) .cache tests/output benchmarks/output
