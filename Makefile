# GraphMend developer entry points. Every target creates .venv when it is missing.
# torch is installed first and pinned exactly: an open range would pull a multi-GB CUDA build.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
TORCH  := torch==2.13.0
STAMP  := $(VENV)/.graphmend-installed
JOBS   ?= 2

.PHONY: venv demo test bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

# The main job on the bundled example: what breaks, where, why, and what it costs.
demo: venv
	@echo "== graphmend check examples/  (predicted graph breaks, statically, in milliseconds)"
	@$(VENV)/bin/graphmend check examples/ --statistics --exit-zero
	@echo
	@echo "== real TorchDynamo on the same model (counting backend + graph_breaks log)"
	@$(PY) examples/confirm.py
	@echo
	@echo "== graphmend fix --diff examples/  (rewrites that provably keep the meaning; nothing is written)"
	@$(VENV)/bin/graphmend fix --diff examples/ --exit-zero
	@echo
	@echo "== graphs and breaks before and after fixing, with real TorchDynamo; outputs compared"
	@$(PY) bench/fix_examples.py

test: venv
	$(PY) -m pytest -q -n $(JOBS)

bench: venv
	$(PY) -m pip install --quiet "transformers==4.57.6"
	$(PY) bench/analyze_speed.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
