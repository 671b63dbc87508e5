"""Which unannotated parameters a function uses as tensors, read from its names and its text.

A parameter without an annotation is UNKNOWN to the analysis (`training`, `use_cache`,
`patch_height` are Python values); its name (`mask`, `*_size`) and the function's own text
(`x.view(...)`, `x @ w`, `torch.cat(x)`) are the evidence that promotes one to a tensor.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import torch_api

# Parameter names that announce a Python flag, setting or size rather than a tensor.
NOT_A_TENSOR_NAME = re.compile(
    r"^(is|use|has|do|output|return|enable|disable|apply|with|skip|need|should|allow|keep|train|inplace|num|n)(_|$)"
    r"|^(training|verbose|debug|deterministic|causal|config|cfg|mode|name|axis|step|epoch|k"
    r"|steps|iters|iterations|epochs|repeats|rounds|trials|max_iter|max_iters|max_steps)$"
    r"|(^|_)(size|sizes|len|length|height|width|dim|dims|count|stride|rank|offset|shape|depth)$"
)
# Parameter names that announce a boolean mask: a `mask` word (`mask`, `padding_mask`,
# `audio_token_mask`, `mask_bool`, `mask_2d`), unless the word after it says the name is something
# else about a mask (`mask_idx`, `mask_token`, `mask_ratio`); used only where a mask matters to
# dynamo (an index).
MASK_NAME = re.compile(
    r"^(?:.*_)?masks?(?:_(?!(?:idx|index|indices|ids|id|pos|position|positions|len|lens|length|lengths|count|counts|ratio"
    r"|prob|probs|token|tokens|value|values|fill|size|shape|dim|type|kind|mode|fn|func)(?:_|$)).*)?$"
)
# Parameter names that announce a `torch.Generator` (`generator`, `noise_generator`, `rng`), taken
# for one only where the function passes the parameter as `generator=`.
GENERATOR_NAME = re.compile(r"^(?:.*_)?(?:generator|gen|rng)$")
_EVIDENCE_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "T", "mT", "grad", "is_cuda"})
# Tensor methods left out of torch_api.EVIDENCE_METHODS because another type has them too, but
# there only with a required argument: called with none (`sigma.log()`), only a tensor accepts the
# call (`Logger.log(level, msg)` raises TypeError). Found by comparing signatures: `log` is the only
# one whose tensor form takes no argument (`Module.type(dst_type)` too, but `x.type()` is a string).
_BARE_CALL_EVIDENCE_METHODS = frozenset({"log"})

# torch functions whose first argument is a number or a size, not a tensor.
NUMBER_ARGUMENT_FUNCTIONS = frozenset(
    {
        "zeros", "ones", "empty", "full", "arange", "rand", "randn", "randint", "randperm", "eye", "linspace",
        "logspace", "tensor", "as_tensor", "scalar_tensor", "manual_seed", "finfo", "iinfo", "device", "Size",
    }
)


def tensor_evidence(text: str, candidates: list[str], evidence_call: Callable[[str], bool]) -> set[str]:
    """Parameters the function body uses as tensors, wherever the use is.

    Unannotated parameters are UNKNOWN by default (`training`, `use_cache`, `patch_height` are
    Python values); evidence promotes one to TENSOR for the whole function: a tensor-only method or
    attribute (`x.view(...)`, `x.shape`), an operand of `@`, or the first argument of a torch
    function (`torch.cat`, `F.softmax`, not `torch.zeros(n)`) or of a submodule (`self.proj(x)`).
    Read from the function's text with `str.find`: C-speed, instead of a Python walk over every
    node, because this runs for most functions on every keystroke.
    """
    found = {name for name in candidates if name in text and _used_as_tensor(text, name, evidence_call)}
    for name in candidates:
        if name not in found and (f"= {name}." in text or f"={name}." in text):  # str.find first: this runs per keystroke
            # `target_cpu = target.to("cpu")` (ProtoNet), then `torch.unique(target_cpu)`: a module's
            # `.to` returns the module, which no tensor use accepts, so the parameter is a tensor
            for match in re.finditer(rf"(?<![\w.])(\w+)\s*=\s*{re.escape(name)}\s*\.\s*(?:{_CONVERSIONS})\s*\(", text):
                alias = match.group(1)
                if alias != name and _used_as_tensor(text, alias, evidence_call):
                    found.add(name)
                    break
    return found


# Methods tensors share with nn.Module (so no evidence by themselves) that return a converted copy.
_CONVERSIONS = "to|cpu|cuda|float|double|half|bfloat16|type"


def _used_as_tensor(text: str, name: str, evidence_call: Callable[[str], bool]) -> bool:
    length, size = len(name), len(text)
    start = 0
    while True:
        index = text.find(name, start)
        if index < 0:
            return False
        start = index + length
        before = text[index - 1] if index else " "
        after = text[start] if start < size else " "
        if before.isalnum() or before in "_." or after.isalnum() or after == "_":
            continue  # part of a longer name or an attribute of something else
        following = _skip_spaces(text, start)
        next_char = text[following] if following < size else ""
        if next_char == ".":
            attr_start = _skip_spaces(text, following + 1)
            attr_end = attr_start
            while attr_end < size and (text[attr_end].isalnum() or text[attr_end] == "_"):
                attr_end += 1
            attr = text[attr_start:attr_end]
            if attr in torch_api.EVIDENCE_METHODS or attr in _EVIDENCE_ATTRIBUTES:
                return True
            if attr in _BARE_CALL_EVIDENCE_METHODS and text.startswith("()", _skip_spaces(text, attr_end)):
                return True
            continue
        if next_char == "@" and text[following + 1 : following + 2] != "=":
            return True
        if next_char == "[" and _array_index(text, following):
            return True
        preceding = index - 1
        while preceding >= 0 and text[preceding] in " \t":
            preceding -= 1
        previous = text[preceding] if preceding >= 0 else ""
        if previous == "@" and preceding > 0 and text[preceding - 1] not in "\n":
            return True
        if previous == "[" and next_char == "," and _opens_tensor_list(text, preceding, evidence_call) and not _rebound(text, name):
            return True
        if previous == "(" and (next_char in (",", ")", "\n") or _number_arithmetic_argument(text, following)):
            callee_end = preceding
            callee_start = callee_end
            while callee_start > 0 and (text[callee_start - 1].isalnum() or text[callee_start - 1] in "_."):
                callee_start -= 1
            callee = text[callee_start:callee_end]
            if callee and not callee[0].isdigit() and evidence_call(callee):
                return True


_NUMBER_ARITHMETIC_ARGUMENT = re.compile(r"(?:\*\*|//|[-+*/%])\s*\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?\s*[,)]")


def _number_arithmetic_argument(text: str, position: int) -> bool:
    """Whether the parameter's use ends in arithmetic with a number literal that ends the argument
    (`torch.div(ilens + 1, 2, rounding_mode="floor")`, ESPnet): a torch function's first argument
    then still needs the parameter to be a tensor, as `torch.div(3 + 1, 2)` raises TypeError."""
    return _NUMBER_ARITHMETIC_ARGUMENT.match(text, position) is not None


def _rebound(text: str, name: str) -> bool:
    """Whether the function's text assigns `name` (`pad = x.new_full(...)`): then a later use may
    be of the new value, not of the parameter."""
    return re.search(rf"(?<![\w.]){re.escape(name)}\s*(?:[-+*/@%&|^]|//|\*\*|>>|<<)?=(?!=)", text) is not None


def _opens_tensor_list(text: str, bracket: int, evidence_call: Callable[[str], bool]) -> bool:
    """Whether the `[` at `text[bracket]` opens the first argument of a torch function that takes
    a list of tensors (`torch.cat([mask, extra], dim=0)`): its elements are tensors."""
    preceding = bracket - 1
    while preceding >= 0 and text[preceding] in " \t\n":
        preceding -= 1
    if preceding < 0 or text[preceding] != "(":
        return False
    callee_start = preceding
    while callee_start > 0 and (text[callee_start - 1].isalnum() or text[callee_start - 1] in "_."):
        callee_start -= 1
    callee = text[callee_start:preceding]
    return callee.rsplit(".", 1)[-1] in _TENSOR_LIST_FUNCTIONS and evidence_call(callee)


# torch functions whose first argument is a sequence of tensors.
_TENSOR_LIST_FUNCTIONS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack"})


def _array_index(text: str, opening: int) -> bool:
    """Whether the index that opens at `text[opening]` (a `[`) has several parts, one a slice, `...`
    or `None` (`mask[:, -1]`, `x[..., 0]`, `x[None, :]`): only arrays take such an index (a list
    raises, a dict would need slices as keys), and dynamo traces NumPy arrays as tensors. One scan:
    a part is a slice where a `:` stands outside its own brackets and no quote is in it."""
    depth, part_start, parts, colon, sliced = 0, opening + 1, 0, False, False
    for position in range(opening + 1, min(len(text), opening + 400)):
        char = text[position]
        if depth:
            depth += char in "([{"
            depth -= char in ")]}"
        elif char in "([{":
            depth = 1
        elif char == ":":
            colon = True
        elif char in "],":
            part = text[part_start:position]
            parts += 1
            sliced = sliced or part.strip() in ("...", "None") or (colon and "'" not in part and '"' not in part)
            if char == "]":
                return parts >= 2 and sliced
            part_start, colon = position + 1, False
        elif char in ")}":
            return False
    return False  # not closed, or too long an index to read this way


def _skip_spaces(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t":
        position += 1
    return position
