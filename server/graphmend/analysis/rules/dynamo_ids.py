"""TorchDynamo's own graph-break ids for each rule, as dynamo reports them on torch 2.13.

Dynamo tags every graph break with an id from its registry (`torch/_dynamo/graph_break_registry.json`,
e.g. GB0036 "Dynamic shape operator"), prints it in `TORCH_LOGS=graph_breaks`, and documents each on
PyTorch's graph-break site. The editor's hover shows them, so a user can go from GraphMend's finding
to dynamo's words and back.

The ids are data measured, not guessed: it is what dynamo logged for each rule's `breaks` examples
and the corpus (tests/ground_truth.py checks every logged id against it on every run, so a torch
upgrade that renumbers a break fails the suite). `CONTEXT_IDS` are the ids dynamo gives a break
because of where it happened (inside a loop, a context manager), whatever the construct.
"""

from __future__ import annotations

from .catalogue import catalogue

GRAPH_BREAK_SITE = "https://meta-pytorch.org/compile-graph-break-site/gb/{}.html"

# Per rule that dynamo logs an id for, from catalogue.toml (the rule's `graph_breaks`).
RULE_GB_IDS: dict[str, tuple[str, ...]] = {code: words.graph_breaks for code, words in catalogue().items() if words.graph_breaks}

# Ids that say where a break happened rather than what broke.
CONTEXT_IDS = frozenset({"GB7000", "GB0066", "GB0092", "GB8335"})

# The registry's `Gb_type` of every id above (checked against torch's registry by the tests).
GRAPH_BREAK_TYPES: dict[str, str] = {
    "GB0007": "Attempted to call function marked as skipped",
    "GB0008": "Attempted to inline function marked as skipped",
    "GB0014": "Attempted to wrap RNN, GRU, or LSTM",
    "GB0015": "Attempted to wrap sparse Tensor",
    "GB0025": "Call to `torch._dynamo.graph_break()`",
    "GB0033": "Data dependent operator",
    "GB0036": "Dynamic shape operator",
    "GB0037": "Dynamic shape operator (no meta kernel)",
    "GB0045": "Encountered tensor.is_inference() during tracing",
    "GB0046": "Encountered torch.is_inference_mode_enabled during tracing",
    "GB0055": "Failed to convert args/kwargs to proxy",
    "GB0059": "Failed to trace builtin operator",
    "GB0066": "Graph break under GenericContextWrappingVariable",
    "GB0069": "Import failure",
    "GB0088": "Observed exception",
    "GB0092": "Reconstruction failure",
    "GB0098": "Skip calling `torch.compiler.disable()`d function",
    "GB0099": "Skip inlining `torch.compiler.disable()`d function",
    "GB0109": "Tensor.tolist() with non-integer tensor",
    "GB0112": "TypeError when making fake tensor call",
    "GB0119": "Uninitialized nn.Module",
    "GB0123": "Unsupported Tensor.backward() call",
    "GB0124": "Unsupported Tensor.item() call with capture_scalar_outputs=False",
    "GB0126": "Unsupported Tensor.resize_() call",
    "GB0127": "Unsupported Tensor.resize_as_() call",
    "GB0134": "Unsupported arguments for itertools.groupby",
    "GB0142": "Unsupported context manager",
    "GB0147": "Unsupported function call",
    "GB0148": "Unsupported function call (delayed)",
    "GB0156": "Unsupported method call",
    "GB0170": "Data-dependent branching",
    "GB0175": "builtin isinstance() cannot determine type of argument",
    "GB0193": "invalid call to builtin op handler",
    "GB0206": "setattr() on Tensor.requires_grad",
    "GB0207": "sort with non-constant keys",
    "GB0208": "torch.* op returned non-Tensor",
    "GB0213": "unimplemented builtin op on tensor arguments",
    "GB0246": "Attempted to use `torch.nn.functional.one_hot` with data-dependent output shape",
    "GB0264": "Attempted to use `torch.nn.Parameter()` constructor with Dynamo",
    "GB0277": "Attempted to wrap sparse Tensor with VariableTracker",
    "GB0291": "logging.Logger method not supported for non-export cases",
    "GB0294": "attempted to trace numpy function unsupported by PyTorch",
    "GB0363": "An opaque object was created in the middle of the program.",
    "GB0467": "setattr() on unsupported type",
    "GB4198": "Attempted to copy.deepcopy a tensor",
    "GB4347": "Missing tp_iternext",
    "GB4695": "torch.jit.script/freeze modules unsupported",
    "GB4841": "Unsupported python_type() call",
    "GB5976": "Data pointer comparison",
    "GB6215": "Unresolved GetAttrVariable comparison",
    "GB7000": "graph break in loop",
    "GB7650": "torch.Generator method",
    "GB8335": "Generator reconstruction with mutations",
    "GB8977": "Invalid call to __build_class__",
    "GB8985": "requires_grad_() intermediate leaked as output",
    "GB9186": "using `torch.autograd.grad` with `torch._dynamo.config.trace_autograd_ops=False`",
}


def gb_ids_for(code: str) -> tuple[str, ...]:
    """The dynamo ids a finding of `code` corresponds to (none for GM000 and unknown codes)."""
    return RULE_GB_IDS.get(code, ())


def graph_break_url(gb_id: str) -> str:
    """The id's page on PyTorch's graph-break site."""
    return GRAPH_BREAK_SITE.format(gb_id.lower())
