"""A small project with a sample input, for the runtime-confirmation tests (CLI and server).

Lines marked `# BREAK` are where TorchDynamo breaks on the sample (the tests check that against a
direct in-process run, too); `# NOT-SEEN` is a static finding dynamo does not break on (the
annotation says tensor, the sample passes a bool); `# NOT-REACHED` is never run by the sample.
"""

from __future__ import annotations

from pathlib import Path

NET = '''\
import torch
from torch import nn

from helpers import rescale


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, flag: torch.Tensor):
        h = self.linear(x)
        if h.sum() > 0:  # BREAK
            h = h * 2
        if flag:  # NOT-SEEN
            h = h + 1
        if h.abs().max() > 1e9:  # BREAK
            print("huge")  # NOT-REACHED
        return rescale(h)


def make_sample():
    torch.manual_seed(0)
    return Net().eval(), (torch.randn(2, 4),), {"flag": True}
'''

HELPERS = '''\
def rescale(h):
    scale = h.abs().mean().item()  # BREAK
    return h / scale
'''

FAILING = '''\
import os
import sys
import time
from pathlib import Path

import torch


def compute(x):
    return x + 1


def raises():
    raise ValueError("the sample needs a config file")


def crashes():
    os.abort()


def hangs():
    Path(os.environ.get("GRAPHMEND_TEST_PIDFILE", "pid.txt")).write_text(str(os.getpid()))
    time.sleep(600)


def escapes():
    """Starts a process in a session of its own (out of the worker's process group), then hangs."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    Path("escaped.txt").write_text(str(child.pid))
    time.sleep(600)


def wrong_shape():
    return compute
'''

BROKEN_IMPORT = '''\
import torch
import a_module_that_does_not_exist  # noqa: F401


def make_sample():
    return None
'''

PYPROJECT = '''\
[tool.graphmend.samples]
"net.py:Net" = "net.py:make_sample"
"failing.py:compute" = "failing.py:raises"
"broken.py:make_sample" = "broken.py:make_sample"
'''


def make_project(root: Path) -> Path:
    for name, text in {
        "net.py": NET,
        "helpers.py": HELPERS,
        "failing.py": FAILING,
        "broken.py": BROKEN_IMPORT,
        "pyproject.toml": PYPROJECT,
    }.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def marked_lines(text: str, mark: str) -> set[int]:
    return {number for number, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith(f"# {mark}")}


def ground_truth_breaks(root: Path) -> set[tuple[str, int]]:
    """(file name, line) of every break real dynamo reports for the sample, run in this process."""
    import importlib
    import os
    import sys

    from graphmend.runtime.worker import capture, locate

    sys.path.insert(0, str(root))
    try:
        for name in ("net", "helpers"):
            sys.modules.pop(name, None)
        net = importlib.import_module("net")
        model, args, kwargs = net.make_sample()
        result = capture(model, args, kwargs)
    finally:
        sys.path.remove(str(root))
        for name in ("net", "helpers"):
            sys.modules.pop(name, None)
    files = {os.path.realpath(root / "net.py"), os.path.realpath(root / "helpers.py")}
    return {(Path(file).name, line) for file, line in (locate(record, files) for record in result["breaks"])}
