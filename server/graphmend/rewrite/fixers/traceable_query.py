"""GM310: a query of process state that has a traceable spelling with the same answer -> that spelling.

Dynamo skips `torch.get_default_device()` ("torch.* op returned non-Tensor"): kornia's
`_extract_device_dtype` breaks on it whenever no tensor gave the device. Where no default device
is set, it returns `cpu`; where one is (`torch.set_default_device`, `with torch.device(...)`), it
returns that device, and where that device has no index it answers with `torch.tensor([]).device`,
the device an empty tensor is created on (torch 2.13's own code). An empty tensor is created on
the default device in every one of these cases, so `torch.empty(0).device` is the same device on
every path, and dynamo traces the factory (kornia's upstream fix, kornia PR 3797, does the same).
A custom `TorchFunctionMode` that sends factories to another device would tell them apart; such a
mode is not a default device, and torch's own query ignores it.

The table is data: a query with no arguments and the expression that gives the same value.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...findings import Finding
from ..context import FixContext
from ..model import DeclineError, Fix, Safety

# qualified name of the query -> (the same value, traced; `{torch}` is the module's torch name; the title)
EQUIVALENTS: dict[str, tuple[str, str]] = {
    "torch.get_default_device": (
        "{torch}.empty(0).device",
        "Read the default device from an empty tensor (`torch.empty(0).device`, the device "
        "torch.get_default_device() names), which dynamo traces",
    ),
}


class TraceableQueryFixer:
    codes = frozenset({"GM310"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        call = ctx.node_for(finding, (ast.Call,))
        if not isinstance(call, ast.Call):
            raise DeclineError("no-node", "could not find the call in the source")
        name = ctx.qualname(call.func)
        if name not in EQUIVALENTS:
            raise DeclineError("no-equivalent", f"`{ctx.excerpt(call, 40)}` has no traceable spelling with the same value")
        if call.args or call.keywords:
            raise DeclineError("arguments", f"`{ctx.excerpt(call, 40)}` is called with arguments")
        function = ctx.function_of(call)
        if function is None:
            raise DeclineError("not-in-function", "the call is not inside a function")
        template, title = EQUIVALENTS[name]
        target = ctx.cst_node(function, call, cst.Call)
        replacement = cst.parse_expression(template.format(torch=ctx.torch_name()))
        edits = [ctx.rewrite(function, {target: replacement})]
        import_edit = ctx.import_edit()
        if import_edit is not None:
            edits.append(import_edit)
        return Fix(finding, title, Safety.SAFE, tuple(edits))
