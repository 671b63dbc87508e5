"""What a boolean-mask selection looks like, and a count taken of one: the masked-reduction fixer
turns reductions of selections into `torch.where` reductions, the scalar fixer turns counts of
them into `torch.count_nonzero`. Both read the same shapes of code, so they are recognised here."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..analysis.kinds import BOOL_KINDS, TENSOR_KINDS
from ..astwalk import walk
from .context import FixContext


@dataclass(frozen=True)
class Selection:
    node: ast.expr  # `x[m]`, `x.masked_select(m)` or `torch.masked_select(x, m)`
    tensor: ast.expr
    mask: ast.expr


def selection_of(ctx: FixContext, node: ast.AST, trusted: bool = False) -> Selection | None:
    """The boolean-mask selection `node` is, if it is one (`trusted`: the rule said it is one; the
    mask's kind is checked once the selection is known to be reduced)."""
    if isinstance(node, ast.Subscript) and (trusted or ctx.kind(node.slice) in BOOL_KINDS):
        return Selection(node, node.value, node.slice)
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr == "masked_select" and len(node.args) == 1:
        tensor, mask = node.func.value, node.args[0]
    elif ctx.qualname(node.func) == "torch.masked_select" and len(node.args) == 2:
        tensor, mask = node.args
    else:
        return None
    return Selection(node, tensor, mask) if trusted or ctx.kind(mask) in BOOL_KINDS else None


@dataclass(frozen=True)
class MaskIndex:
    """The index of a boolean-mask selection: the mask alone (`x[m]`), or the mask among full
    slices (`x[:, m]`, `x[m, :]`, `x[..., m]`), which selects over the dimensions it stands for."""

    index: ast.expr  # as written; other selections by the same mask are written alike
    mask: ast.expr
    lead: int | None  # dimensions before the mask's (None: the mask covers the last dimensions)
    rest: int  # full slices after the mask, each a dimension the tensor must have

    @property
    def among_slices(self) -> bool:
        return self.index is not self.mask


def mask_index(index: ast.expr) -> MaskIndex | None:
    """The mask in `index` and where it stands, when `index` is one expression (the mask) or a
    tuple of full slices (`:`) with one other element, the mask, and at most one `...` (before
    the mask only when nothing follows it); None for any other index (integers, partial slices,
    several masks)."""
    if not isinstance(index, ast.Tuple):
        return None if isinstance(index, ast.Slice) or _is_ellipsis(index) else MaskIndex(index, index, 0, 0)
    others = [i for i, element in enumerate(index.elts) if not (_is_full_slice(element) or _is_ellipsis(element))]
    if len(others) != 1 or any(isinstance(element, ast.Starred) for element in index.elts):
        return None
    position = others[0]
    before, after = index.elts[:position], index.elts[position + 1 :]
    rest = sum(_is_full_slice(element) for element in after)
    if not any(_is_ellipsis(element) for element in before):
        return MaskIndex(index, index.elts[position], position, rest)
    if len(before) == 1 and not after:
        return MaskIndex(index, index.elts[position], None, 0)  # `x[..., m]`
    return None


def _is_full_slice(node: ast.expr) -> bool:
    return isinstance(node, ast.Slice) and node.lower is None and node.upper is None and node.step is None


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def reference_root(node: ast.expr) -> str | None:
    """The name a name or attribute chain starts from (`x`, `self.config.eps`): such an expression
    is cheap and has no effect when read again; None for anything else."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def number_literal(node: ast.expr) -> bool:
    """A number or bool literal, negative ones included (`-100`, `True`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)


def rereadable(node: ast.expr) -> bool:
    """A mask that is cheap and effect-free to evaluate again, as a check settled while tracing
    needs: a name or attribute chain, a number, or comparisons and boolean operators over them
    (`target != ignore_index`, `(x > 0) & valid`)."""
    if reference_root(node) is not None:
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, bool)) or node.value is None
    if isinstance(node, ast.Compare):
        return len(node.ops) == 1 and rereadable(node.left) and rereadable(node.comparators[0])
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.Invert, ast.USub)) and rereadable(node.operand)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and rereadable(node.left) and rereadable(node.right)
    return False


def mask_roots(mask: ast.expr) -> list[str]:
    """The names a mask reads (`target` and `ignore_index` of `target != ignore_index`, `self` of
    `self.mask`), in order of appearance."""
    roots: list[str] = []
    for node in walk(mask):
        root = reference_root(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if root is not None and root not in roots:
            roots.append(root)
    return roots


@dataclass(frozen=True)
class SelectionCount:
    node: ast.expr  # the whole count: `len(x[m])`, `x[m].numel()`, `m.nonzero().size(0)`
    mask: ast.expr  # what count_nonzero counts
    selected: ast.expr | None  # `x` of `x[m]` (None for nonzero, which counts any mask)
    per_element: bool = False  # `m.nonzero().numel()`: count * m.dim()


def selection_count(ctx: FixContext, node: ast.AST) -> SelectionCount | None:
    """The count that `node`, a selection the rule found or a `nonzero`, only feeds, if it does."""
    selection = selection_of(ctx, node, trusted=True)
    mask, selected = (selection.mask, selection.tensor) if selection is not None else (_nonzero_mask(ctx, node), None)
    if mask is None:
        return None
    assert isinstance(node, ast.expr)
    found = counted_by(ctx, node)
    if found is None:
        return None
    counted, whole_numel = found
    if whole_numel and selected is None:
        return SelectionCount(counted, mask, None, per_element=True)  # nonzero(): one row of indices per element
    return SelectionCount(counted, mask, selected)


def counted_by(ctx: FixContext, node: ast.expr) -> tuple[ast.expr, bool] | None:
    """The count `node` is the operand of (`len(node)`, `node.numel()`, `node.size(0)`,
    `node.shape[0]`), and whether it counts every element (`numel`), or None."""
    parent = ctx.parent(node)
    counted: ast.expr | None = None
    whole_numel = False
    if isinstance(parent, ast.Call) and ctx.qualname(parent.func) in ("builtins.len", "torch.numel") and parent.args == [node] and not parent.keywords:
        counted, whole_numel = parent, ctx.qualname(parent.func) == "torch.numel"
    elif isinstance(parent, ast.Attribute) and parent.value is node:
        outer = ctx.parent(parent)
        if isinstance(outer, ast.Call) and outer.func is parent and not outer.keywords:
            if parent.attr in ("numel", "nelement") and not outer.args:
                counted, whole_numel = outer, True
            elif parent.attr == "size" and len(outer.args) == 1 and _is_zero(outer.args[0]):
                counted = outer
        elif isinstance(outer, ast.Subscript) and outer.value is parent and parent.attr == "shape" and _is_zero(outer.slice):
            counted = outer
    return (counted, whole_numel) if counted is not None else None


def _nonzero_mask(ctx: FixContext, node: ast.AST) -> ast.expr | None:
    """`m` of `m.nonzero()` / `torch.nonzero(m)` (as_tuple left False)."""
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr == "nonzero" and not node.args and ctx.kind(node.func.value) in TENSOR_KINDS:
        return node.func.value
    if ctx.qualname(node.func) == "torch.nonzero" and len(node.args) == 1:
        return node.args[0]
    return None


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and type(node.value) is int
