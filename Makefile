# GraphMend developer entry points. Every target creates .venv when it is missing.
# torch is installed first and pinned exactly: an open range would pull a multi-GB CUDA build.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
TORCH  := torch==2.13.0
STAMP  := $(VENV)/.graphmend-installed
DEMO_STAMP := $(VENV)/.graphmend-demo-installed
JOBS   ?= 2

NPM_STAMP := node_modules/.graphmend-installed

.PHONY: venv demo lint test bench bench-models bench-vision clean vsix screenshot

venv: $(STAMP)

# The demo needs only torch and GraphMend itself; the tests add their extras (transformers,
# Neovim 0.11, pytest-lsp...) on top.
$(DEMO_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e . numpy  # numpy: torch warns on import without it
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

# The main job on the bundled example: what breaks, where, why, and what it costs.
demo: $(DEMO_STAMP)
	@echo "== graphmend check examples/  (predicted graph breaks, statically, in milliseconds)"
	@$(VENV)/bin/graphmend check examples/ --statistics --exit-zero
	@echo
	@echo "== graphmend explain: real TorchDynamo on a sample input, each finding confirmed or not"
	@$(VENV)/bin/graphmend explain examples/tiny_transformer.py:Block || test $$? -eq 1
	@echo
	@echo "== graphmend fix --diff examples/  (rewrites that provably keep the meaning; nothing is written)"
	@$(VENV)/bin/graphmend fix --diff examples/ --exit-zero
	@echo
	@echo "== graphs and breaks before and after fixing, with real TorchDynamo; outputs compared"
	@$(PY) bench/fix_examples.py

# Node side: the VS Code extension (npm workspace root: package.json).
$(NPM_STAMP): package.json package-lock.json vscode-extension/package.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

# vscode-extension/graphmend.vsix (type-check, bundle, package)
vsix: $(NPM_STAMP) $(DEMO_STAMP)
	rm -rf vscode-extension/bundled && mkdir -p vscode-extension/bundled
	$(PY) -m pip wheel --quiet --no-deps --no-build-isolation -w vscode-extension/bundled .
	npm run --silent package

# ruff (rules in pyproject.toml) over our code and mypy over the package: seconds, so first.
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# Lint, the Python suite, and the extension's type-check and unit tests; the .vsix is built for the
# real-VS-Code test (code-server, installed by tools/setup-code-server.sh; skipped without it).
test: lint vsix
	npm test --silent
	$(PY) -m pytest -q -n $(JOBS) --dist worksteal --durations=15

# Refresh the extension README's screenshot from a real VS Code run.
screenshot: venv vsix
	GRAPHMEND_SCREENSHOTS=$(CURDIR)/.cache/screenshots $(PY) -m pytest -q -k vscode tests/test_editors.py
	cp .cache/screenshots/quickfix.png vscode-extension/images/screenshot.png
	cp .cache/screenshots/confirm.png vscode-extension/images/confirm.png
	cp .cache/screenshots/notebook-quickfix.png vscode-extension/images/notebook.png

bench: venv
	$(PY) -m pip install --quiet "transformers==4.57.6"
	$(PY) bench/analyze_speed.py

# The real-model benchmark (issue 7): every transformers model type that builds small, before and
# after `graphmend fix`, on transformers 4.52.4 (the paper's) and 5.23.0. Long: tens of minutes.
bench-models: venv
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) bench/models/run.py --jobs $(JOBS) $(BENCH_ARGS)

# Static recall on timm and torchvision detection models against dynamo (issue 16): the packages
# are installed apart, under .cache/bench/vision. About 25 minutes on 2 cores.
bench-vision: venv
	$(PY) bench/vision/run.py --jobs $(JOBS) $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis node_modules vscode-extension/dist vscode-extension/out vscode-extension/graphmend.vsix
