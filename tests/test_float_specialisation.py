"""A rewrite must not join, in one graph, a changing Python float's use as a tensor operand and as a
baked scalar argument: torch 2.13's inductor then computes stale values (rewrite/float_specialisation.py).

The first test is the bug itself, on real inductor: while it passes, the decline is needed; if a
torch upgrade fixes the bug it fails, and the decline can go.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from graphmend.rewrite import fix_source
from graphmend.rewrite.float_specialisation import SCALAR_USE, TENSOR_USE, _uses

BUG = """
import os, sys, tempfile
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp()  # a cold cache, as on a user's first run
import torch

def select(x, lim):
    return torch.where(x > lim, x.clamp(max=lim), x)

def broken(x, lim):
    if (x > lim).any():
        return x.clamp(max=lim)
    return x

x = torch.tensor([3.0, 0.5, 2.0])
for fn in (select, broken):
    compiled = torch.compile(fn)
    wrong = sum(not torch.equal(compiled(x, lim), fn(x, lim)) for lim in (1.0, 0.0, 2.5, 0.25))
    print(fn.__name__, wrong)
"""


def test_inductor_bakes_a_stale_float_where_one_graph_holds_both_uses(tmp_path: Path) -> None:
    script = tmp_path / "bug.py"
    script.write_text(BUG, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = dict(line.split() for line in done.stdout.splitlines())
    assert counts["broken"] == "0", "the original, with its graph break, computes right"
    assert counts["select"] != "0", "torch no longer miscompiles the joined graph: the decline can go"


def _fixed(body: str, signature: str = "x, lim: float") -> str:
    source = f"import torch\n\n\n@torch.compile\ndef f({signature}):\n{textwrap.indent(textwrap.dedent(body), '    ')}"
    return fix_source(source, "case.py").fixed


@pytest.mark.parametrize(
    ("body", "signature"),
    [
        ("if x.sum() > lim:\n    x = x.clamp(max=lim)\nreturn x\n", "x, lim: float"),
        ("if x.sum() > lim:\n    x = x.clamp_min(lim)\nreturn x\n", "x, lim: float"),
        ("if x.sum() > lim:\n    x = x.masked_fill(x < 0, lim)\nreturn x\n", "x, lim: float"),
        ("bound = lim * 2\nif x.sum() > bound:\n    x = x.clamp(max=lim)\nreturn x\n", "x, lim: float"),
        ("if x.sum() > self.lim:\n    x = x.clamp(min=-self.lim, max=self.lim)\nreturn x\n", "self, x"),
        # the scalar use outside the rewritten `if`, the break between them
        ("if x.sum() > lim:\n    x = x * 2\nreturn x.clamp(max=lim)\n", "x, lim: float"),
    ],
)
def test_a_float_compared_and_baked_keeps_its_break(body: str, signature: str) -> None:
    assert "torch.where" not in _fixed(body, signature)


@pytest.mark.parametrize(
    ("body", "signature"),
    [
        ("if x.sum() > lim:\n    x = x * 0.5 + lim\nreturn x\n", "x, lim: float"),  # tensor operands only
        ("if x.sum() > lim:\n    x = x.clamp(max=lim)\nreturn x\n", "x, lim: int"),  # an int: measured right
        ("if x.sum() > 1.0:\n    x = x.clamp(max=1.0)\nreturn x\n", "x"),  # literals are constants
        ("if x.sum() > lim:\n    x = x.clamp(max=lim)\nreturn x\n", "x, lim: torch.Tensor"),
    ],
)
def test_a_float_used_one_way_is_rewritten(body: str, signature: str) -> None:
    assert "torch.where" in _fixed(body, signature)


def test_a_module_constant_is_not_a_changing_float() -> None:
    source = "import torch\n\nLIMIT = 2.5\n\n\n@torch.compile\ndef f(x):\n    if x.sum() > LIMIT:\n        x = x.clamp(max=LIMIT)\n    return x\n"
    assert "torch.where" in fix_source(source, "case.py").fixed


@pytest.mark.parametrize(
    ("expression", "kind"),
    [
        ("x ** lim", SCALAR_USE),  # the exponent is baked (measured wrong beside `x > lim`)
        ("x % (lim + 1)", SCALAR_USE),
        ("x.div(lim, rounding_mode='floor')", SCALAR_USE),
        ("x.div(lim)", None),  # a plain division is a tensor operand only through `/`
        ("torch.where(c, x, lim)", SCALAR_USE),
        ("torch.where(x > lim, x, y)", TENSOR_USE),
        ("lim ** x", TENSOR_USE),
        ("F.leaky_relu(x, lim)", None),  # measured right: not baked
        ("n // lim + 2 * lim * m", None),  # Python arithmetic (transformers: heads // groups)
        ("x.clamp(max=n // lim)", SCALAR_USE),
    ],
)
def test_how_a_float_is_used(expression: str, kind: str | None) -> None:
    tree = ast.parse(expression)
    kinds = {use.kind for use in _uses(tree, lambda name: name in ("x", "c")) if use.root == "lim"}
    assert kinds == ({kind} if kind else set())
