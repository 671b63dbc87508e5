"""Which expressions hold a NumPy array when their function runs eagerly.

The kinds call a NumPy array a tensor, since compiled code runs NumPy as tensor ops
(torch._numpy). That stops holding once dynamo runs a function eagerly: the array is NumPy's own
again, and a Python 3.11 comprehension over it gets NumPy's iterator as its frame's input, which
dynamo cannot iterate ("Missing tp_iternext"; measured on torch 2.13, where a tensor's iterator is
taken). GM519 asks this module so as not to take such an array for a tensor.

Syntactic and flow-light: a name is followed to its last binding written before the place asked
about (an assignment or a `for` target), so `x = x.cpu().numpy()` over a tensor parameter `x`
counts from that line on.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..astwalk import child_nodes

# Array methods whose result is no longer an array.
_LEAVING_NUMPY = frozenset({"tolist", "item", "tobytes", "tostring"})


class NumpyValues:
    """Answers `holds_array(expr, line)` for the expressions of one function."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, qualname: Callable[[ast.AST], str | None]) -> None:
        self._qualname = qualname
        self._bindings = _bindings(function)

    def holds_array(self, node: ast.expr, line: int, depth: int = 0) -> bool:
        """Whether `node`, evaluated on `line`, is a NumPy array (a `.numpy()` result, what a
        `numpy.*` function returns, an element, slice, method result or comparison of one)."""
        if depth > 20:
            return False
        if isinstance(node, ast.Name):
            value = self._last_binding(node.id, line)
            return value is not None and self.holds_array(value[0], value[1], depth + 1)
        if isinstance(node, ast.Subscript):
            return self.holds_array(node.value, line, depth + 1)
        if isinstance(node, ast.Compare):
            return any(self.holds_array(n, line, depth + 1) for n in [node.left, *node.comparators])
        if isinstance(node, ast.BinOp):
            return self.holds_array(node.left, line, depth + 1) or self.holds_array(node.right, line, depth + 1)
        if isinstance(node, ast.Call):
            return self._call_holds_array(node, line, depth)
        return False

    def _call_holds_array(self, node: ast.Call, line: int, depth: int) -> bool:
        """`t.numpy()`, `np.unique(a)`, `a.transpose()`: a call whose result is an array."""
        if (self._qualname(node.func) or "").startswith("numpy."):
            return True
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr in _LEAVING_NUMPY:
            return False
        return func.attr == "numpy" or self.holds_array(func.value, line, depth + 1)

    def _last_binding(self, name: str, line: int) -> tuple[ast.expr, int] | None:
        """The value `name` was last bound to before `line` (for a `for` target, one element of
        its iterable, which is an array when the iterable is a 2-D one), and that binding's line."""
        earlier = [b for b in self._bindings.get(name, ()) if b[1] < line]
        return max(earlier, key=lambda b: b[1]) if earlier else None


def _bindings(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[tuple[ast.expr, int]]]:
    """name -> (the value it is bound to, as an expression whose array-ness is the name's; line)
    for plain-name assignments and `for` targets in the function (not its nested functions)."""
    found: dict[str, list[tuple[ast.expr, int]]] = {}

    def visit(node: ast.AST) -> None:
        for child in child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Assign):
                for target in child.targets:
                    if isinstance(target, ast.Name):
                        found.setdefault(target.id, []).append((child.value, child.lineno))
            elif isinstance(child, (ast.For, ast.AsyncFor)) and isinstance(child.target, ast.Name):
                element = ast.Subscript(value=child.iter, slice=ast.Constant(0), ctx=ast.Load())
                found.setdefault(child.target.id, []).append((element, child.lineno))
            visit(child)

    visit(function)
    return found
