"""Whether a value a statement leaves in a name can be read later (`flow.read_after`): the where
rewrite computes a branch's temporaries on every path, which is right only where the value it
leaves is never read. Each case marks the statement with `# here` and asks about `t`."""

from __future__ import annotations

import ast

import pytest
from graphmend.analysis import analyze_detailed
from graphmend.rewrite.context import FixContext
from graphmend.rewrite.flow import read_after

CASES = [
    ("assigned again before the next read", "t = x * 2  # here\nt = x + 1\nreturn t", False),
    ("read first", "t = x * 2  # here\ny = t + 1\nt = y\nreturn t", True),
    ("read by the assignment that replaces it", "t = x * 2  # here\nt = t + 1\nreturn t", True),
    ("assigned again in both arms", "t = x * 2  # here\nif x.dim():\n    t = x\nelse:\n    t = -x\nreturn t", False),
    ("assigned again in one arm only", "t = x * 2  # here\nif x.dim():\n    t = x\nreturn t", True),
    ("next iteration assigns before reading", "for i in range(3):\n    if x.sum() > 0:  # here\n        t = x * i\n        x = t + 1\nreturn x", False),
    ("a try's else reads it", "try:\n    t = x * 2  # here\nexcept ValueError:\n    pass\nelse:\n    x = t\nreturn x", True),
    ("next iteration reads before assigning", "t = x\nfor i in range(3):\n    x = x + t\n    t = x * i  # here\nreturn x", True),
    ("a continue skips the reassignment", "for i in range(3):\n    t = x * i  # here\n    if i:\n        continue\n    t = x\n    x = x + t\nreturn x + t", True),
    ("a break skips the reassignment", "for i in range(3):\n    t = x * i  # here\n    if i:\n        break\n    t = x\nreturn t", True),
    ("read by a while test", "t = x\nwhile t.dim() > 5:\n    t = x * 2  # here\n    x = t\nreturn x", True),
    ("read by a finally block", "try:\n    t = x * 2  # here\n    t = x\nfinally:\n    print(t)\nreturn x", True),
    ("read by a closure", "t = x * 2  # here\nf = lambda: t\nt = x\nreturn f()", True),
    ("a break in an inner block skips an outer reassignment", "for i in range(3):\n    if x.sum() > 0:\n        t = x * i  # here\n        if i:\n            break\n    t = x\nreturn t", True),
    ("an exception inside a try skips the reassignment", "t = x\ntry:\n    if x.sum() > 0:\n        t = x * 2  # here\n        if x.dim():\n            raise ValueError\n    t = x - 3\nexcept ValueError:\n    pass\nreturn t", True),
    ("a suppressing with skips the reassignment", "t = x\nwith contextlib.suppress(RuntimeError):\n    t = x * 2  # here\n    t = x.view(-1, 7)\nreturn t", True),
    ("augmented assignment reads", "t = x * 2  # here\nt += 1\nreturn x", True),
    ("del reads", "t = x * 2  # here\ndel t\nreturn x", True),
    ("a closure defined before", "g = lambda: t\nt = x * 2  # here\nt = x\nreturn g()", True),
    ("read in a finally after an except body", "try:\n    y = x.view(-1)\nexcept RuntimeError:\n    t = x * 2  # here\n    t = x\nfinally:\n    print(t)\nreturn x", True),
    ("read after the loop", "for i in range(3):\n    t = x * i  # here\nreturn t", True),
]


@pytest.mark.parametrize(("body", "read"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_value_is_live_exactly_where_a_path_reads_it_before_it_is_assigned_again(body: str, read: bool) -> None:
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    source = f"import contextlib\nimport torch\n\n\n@torch.compile\ndef f(x):\n{indented}"
    result = analyze_detailed(source, "case.py", keep_facts=True)
    ctx = FixContext(result)
    marked = next(number for number, line in enumerate(source.splitlines(), 1) if line.endswith("# here"))
    assert result.tree is not None
    statement = next(node for node in ast.walk(result.tree) if isinstance(node, ast.stmt) and node.lineno == marked)
    assert read_after(ctx, statement, "t") is read
