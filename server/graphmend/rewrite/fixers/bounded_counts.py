"""GM405: `torch.bincount(idx, minlength=k)` over indices an argmax produced -> a fixed-size count.

`bincount` returns `max(idx) + 1` bins, or `minlength` when that is more: a size that depends on
the data, so dynamo breaks. Where `idx` comes from an argmax (or `max(dim).indices`, `topk`,
`sort`, `argsort`) over a dimension of `n` entries, every value is below `n`; with `n <= k` the
result has exactly `k` bins and equals

    torch.zeros(k, dtype=torch.int64, device=idx.device).scatter_add_(0, idx, torch.ones_like(idx))

which has a fixed shape. k-means and vector-quantiser code counts cluster members this way
(audiocraft's `kmeans`: `buckets = dists.max(dim=-1).indices; bins = torch.bincount(buckets,
minlength=num_clusters)`), and routers count tokens per expert from `topk` indices.

`n <= k`, a one-dimensional int64 `idx` and a Python int `k` are known while tracing, so the
rewrite keeps the original call behind that check (`_graphmend_counts_fit`): where it does not
hold, `bincount` runs as before (and breaks, as before). The argmax's input must be a name the code
does not rebind between the argmax and the count, so its shape is read from the same tensor.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...astwalk import walk
from ...findings import Finding
from ..compile_checks import COUNTS_FIT, checked_or_original, helper_edits
from ..context import FixContext
from ..flow import parameter_names, reaching_definition
from ..model import DeclineError, Fix, Safety

TITLE = (
    "Count into `{k}` bins with `scatter_add_` where dynamo knows the indices, from an argmax over at most `{k}` entries, "
    "fill exactly that many (the same counts; elsewhere `bincount` runs as before)"
)

# Index-producing calls (method or torch function) -> (the position of `dim` among the arguments
# after the tensor, its default; None: the index of the flattened tensor, below its numel).
INDEX_CALLS: dict[str, tuple[int, int | None]] = {
    "argmax": (0, None),
    "argmin": (0, None),
    "argsort": (0, -1),
    "topk": (1, -1),
    "sort": (0, -1),
    "max": (0, None),
    "min": (0, None),
}
# Calls that return (values, indices): their indices are `.indices` or `[1]`.
PAIRED = frozenset({"topk", "sort", "max", "min"})
# Methods that keep the values of a one-dimensional result (flattening a 1-d index changes nothing).
KEEPS_VALUES = frozenset({"flatten", "view", "reshape", "contiguous", "detach"})


class BoundedCountsFixer:
    codes = frozenset({"GM405"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        call = ctx.node_for(finding, (ast.Call,))
        if not isinstance(call, ast.Call):
            raise DeclineError("no-node", "could not find the call in the source")
        index, minlength = _bincount_arguments(ctx, call)
        statement = ctx.statement_of(call)
        function = ctx.function_of(call)
        if statement is None or function is None:
            raise DeclineError("not-in-function", "the call is not inside a function")
        if not (isinstance(index, ast.Name) and isinstance(minlength, (ast.Name, ast.Attribute, ast.Constant))):
            raise DeclineError("not-a-count", "the indices are not a name, or the bin count not a name or a number")
        source = reaching_definition(ctx, statement, index.id)
        bound = _index_bound(ctx, source, statement) if source is not None else None
        if bound is None:
            raise DeclineError(
                "counts-unbounded",
                f"`{index.id}` is not known to come from an argmax (or `max(dim).indices`, `topk`, `sort`) of a tensor the code "
                "still holds: its values, and so the number of bins, depend on the data",
            )
        torch = ctx.torch_name()
        k, idx = ctx.code(minlength), index.id
        fixed = f"{torch}.zeros({k}, dtype={torch}.int64, device={idx}.device).scatter_add_(0, {idx}, {torch}.ones_like({idx}))"
        check = f"{COUNTS_FIT}({idx}, {bound}, {k})"
        replacement = cst.parse_expression(checked_or_original(fixed, check, ctx.code(call)))
        target = ctx.cst_node(function, call, cst.Call)
        edits = [ctx.rewrite(function, {target: replacement}), *helper_edits(ctx, COUNTS_FIT)]
        import_edit = ctx.import_edit()
        if import_edit is not None:
            edits.append(import_edit)
        return Fix(finding, TITLE.format(k=k), Safety.SAFE, tuple(edits))


def _bincount_arguments(ctx: FixContext, call: ast.Call) -> tuple[ast.expr, ast.expr]:
    """The indices and the `minlength` of a `bincount` without weights."""
    if ctx.qualname(call.func) == "torch.bincount" and call.args:
        index, rest = call.args[0], call.args[1:]
    elif isinstance(call.func, ast.Attribute) and call.func.attr == "bincount" and ctx.qualname(call.func) is None:
        index, rest = call.func.value, list(call.args)
    else:
        raise DeclineError("not-a-count", "the call is not `torch.bincount` or `.bincount()`")
    keywords = {k.arg: k.value for k in call.keywords}
    weights = rest[0] if rest else keywords.get("weights")
    if weights is not None and not (isinstance(weights, ast.Constant) and weights.value is None):
        raise DeclineError("counts-weighted", "the counts are weighted: their dtype is the weights', not int64")
    minlength = rest[1] if len(rest) > 1 else keywords.get("minlength")
    if minlength is None or set(keywords) - {"weights", "minlength"}:
        raise DeclineError("counts-no-minlength", "no `minlength` fixes the number of bins")
    return index, minlength


def _index_bound(ctx: FixContext, value: ast.expr, use: ast.stmt) -> str | None:
    """The size every index in `value` is below, as code (`dists.shape[-1]`), when `value` is an
    argmax-like call of a name that still holds the same tensor at `use`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in KEEPS_VALUES:
        value = value.func.value
    indices_attribute = isinstance(value, ast.Attribute) and value.attr == "indices"
    second_element = isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and value.slice.value == 1
    paired = indices_attribute or second_element
    if paired:
        assert isinstance(value, (ast.Attribute, ast.Subscript))
        value = value.value
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    method = value.func.attr
    if method not in INDEX_CALLS or (method in PAIRED) != paired:
        return None
    if ctx.qualname(value.func) == f"torch.{method}":
        if not value.args:
            return None
        tensor, arguments = value.args[0], value.args[1:]
    elif ctx.qualname(value.func) is None:
        tensor, arguments = value.func.value, list(value.args)
    else:
        return None
    position, default = INDEX_CALLS[method]
    dim_node = next((k.value for k in value.keywords if k.arg == "dim"), arguments[position] if len(arguments) > position else None)
    if method in ("max", "min") and dim_node is None:
        return None  # the maximum itself, with no indices
    if dim_node is None:
        dim: int | None = default
    elif isinstance(dim_node, ast.Constant) and type(dim_node.value) is int:
        dim = dim_node.value
    elif isinstance(dim_node, ast.UnaryOp) and isinstance(dim_node.op, ast.USub) and isinstance(dim_node.operand, ast.Constant):
        dim = -dim_node.operand.value if type(dim_node.operand.value) is int else None
        if dim is None:
            return None
    else:
        return None
    if not isinstance(tensor, ast.Name):
        return None
    producer = ctx.statement_of(value)
    if producer is None or reaching_definition(ctx, producer, tensor.id) is not reaching_definition(ctx, use, tensor.id):
        return None  # rebound between the argmax and the count
    if reaching_definition(ctx, use, tensor.id) is None and not _unbound_parameter(ctx, tensor.id, use):
        return None
    return f"{tensor.id}.numel()" if dim is None else f"{tensor.id}.shape[{dim}]"


def _unbound_parameter(ctx: FixContext, name: str, use: ast.stmt) -> bool:
    """A parameter the function never rebinds: every statement sees the same tensor."""
    function = ctx.function_of(use)
    if function is None or name not in parameter_names(function):
        return False
    return not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in walk(function))
