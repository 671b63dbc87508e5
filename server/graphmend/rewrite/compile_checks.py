"""Module-level predicates a rewrite calls to keep the original code for the inputs it cannot prove
(and one guard, `_graphmend_float_divisor`, that keeps Python's ZeroDivisionError).

Some rewrites are exact only when shapes and dtypes line up (multiplying by an all-ones mask gives
back the tensor only if the mask broadcasts into it and does not widen its dtype). Static analysis
seldom knows a parameter's dtype, but dynamo does: shapes, dtypes and `requires_grad` are known
while tracing, so a Python `if` on them costs no graph break and is decided once per compiled
specialisation (dynamo guards on it). The rewrite tests the predicate first and falls back to the
original test when it is false, so every input keeps its original result:

    if mask is not None and (_graphmend_product_keeps(x, mask[:, None]) or not torch.all(mask == 1)):

The predicates are added once per module, right after its `import torch`, like the ordered-op helper.
"""

from __future__ import annotations

from ..analysis.guards import TRUE_WHEN_FIXED_NAMES
from ..findings import Edit, Span
from .context import FixContext
from .model import DeclineError

PRODUCT_KEEPS = "_graphmend_product_keeps"
assert PRODUCT_KEEPS in TRUE_WHEN_FIXED_NAMES  # the analysis treats the test after it as not traced

_PRODUCT_KEEPS_TEXT = '''

def {name}(tensor, factor, same_dtype=True):
    """Whether `tensor * factor` has `tensor`'s shape (and dtype) and sends `factor` no gradient.

    Added by GraphMend: decided from shapes and dtypes only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False the original test runs.
    """
    return (
        not factor.requires_grad
        and factor.dim() <= tensor.dim()
        and all(f in (1, t) for t, f in zip(reversed(tensor.shape), reversed(factor.shape)))
        and (not same_dtype or {torch}.promote_types(tensor.dtype, factor.dtype) == tensor.dtype)
    )
'''

COMPLEMENT_KEEPS = "_graphmend_complement_keeps"
assert COMPLEMENT_KEEPS in TRUE_WHEN_FIXED_NAMES

_COMPLEMENT_KEEPS_TEXT = '''

def {name}(tensor, mask, same_dtype=True):
    """Whether `tensor * (1 - mask)` can be computed, has `tensor`'s shape (and dtype) and sends
    `mask` no gradient (`1 - mask` has the mask's dtype and shape, and a bool mask cannot be
    subtracted from).

    Added by GraphMend: decided from shapes and dtypes only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False the original test runs.
    """
    return (
        mask.dtype != {torch}.bool
        and not mask.requires_grad
        and mask.dim() <= tensor.dim()
        and all(m in (1, t) for t, m in zip(reversed(tensor.shape), reversed(mask.shape)))
        and (not same_dtype or {torch}.promote_types(tensor.dtype, mask.dtype) == tensor.dtype)
    )
'''

COUNTS_FIT = "_graphmend_counts_fit"
assert COUNTS_FIT in TRUE_WHEN_FIXED_NAMES

_COUNTS_FIT_TEXT = '''

def {name}(index, index_bound, minlength):
    """Whether `torch.bincount(index, minlength=minlength)` has exactly `minlength` bins: `index`
    is a one-dimensional int64 tensor of values below `index_bound` (it comes from an argmax over
    that many entries), and `index_bound` is at most `minlength`, a Python int.

    Added by GraphMend: decided from shapes and dtypes only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False `bincount` runs as before.
    """
    return (
        isinstance(minlength, int)
        and isinstance(index, {torch}.Tensor)
        and index.dim() == 1
        and index.dtype == {torch}.int64
        and index_bound <= minlength
    )
'''

BROADCASTABLE = "_graphmend_broadcastable"
assert BROADCASTABLE in TRUE_WHEN_FIXED_NAMES

_BROADCASTABLE_TEXT = '''

def {name}(*groups):
    """Whether each group's values are tensors (or Python numbers) whose shapes broadcast together,
    on one device apart from 0-d tensors (which torch moves), so elementwise arithmetic and
    comparisons over a group cannot raise, even on a path where the original did not compute them.

    Added by GraphMend: decided from shapes and devices only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False the original code runs.
    """
    for group in groups:
        if not all(isinstance(v, ({torch}.Tensor, bool, int, float)) for v in group):
            return False
        tensors = [v for v in group if isinstance(v, {torch}.Tensor)]
        devices = [t.device for t in tensors if t.dim() > 0]
        if not all(d == devices[0] for d in devices):
            return False
        width = 0
        for tensor in tensors:
            width = max(width, tensor.dim())
        for position in range(1, width + 1):
            sizes = [t.shape[-position] for t in tensors if t.dim() >= position and t.shape[-position] != 1]
            if not all(s == sizes[0] for s in sizes):
                return False
    return True
'''

SAME_TYPE = "_graphmend_same_type"
assert SAME_TYPE in TRUE_WHEN_FIXED_NAMES

_SAME_TYPE_TEXT = '''

def {name}(*values):
    """Whether `values` are tensors of one dtype, shape and device, so `torch.where` over them
    gives each one's values back unchanged (no promotion, no broadcasting).

    Added by GraphMend: decided from dtypes and shapes only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False the original branches run.
    """
    first = values[0]
    return all(
        isinstance(v, {torch}.Tensor) and v.dtype == first.dtype and v.shape == first.shape and v.device == first.device
        for v in values
    )
'''

HAS_DTYPE = "_graphmend_has_dtype"
assert HAS_DTYPE in TRUE_WHEN_FIXED_NAMES

_HAS_DTYPE_TEXT = '''

def {name}(tensor, dtype):
    """Whether `tensor` has `dtype` already, so binding `dtype = tensor.dtype` changes nothing.

    Added by GraphMend: decided from dtypes only, so under torch.compile it is settled while
    tracing and costs no graph break; where it is False the original test runs.
    """
    return tensor.dtype == dtype
'''

BROADCAST_FREE = "_graphmend_broadcast_free"
assert BROADCAST_FREE in TRUE_WHEN_FIXED_NAMES

_BROADCAST_FREE_TEXT = '''

def {name}(*values):
    """Whether `values` are floating tensors on one device whose shapes agree, tensors of one
    element aside (they broadcast with any shape), so elementwise arithmetic over them cannot
    raise, even on a path where the original did not compute it.

    Added by GraphMend: decided from dtypes, shapes and devices only, so under torch.compile it is
    settled while tracing and costs no graph break; where it is False the original branches run.
    """
    tensors = [v for v in values if isinstance(v, {torch}.Tensor)]
    if len(tensors) != len(values) or not all(t.is_floating_point() and t.device == tensors[0].device for t in tensors):
        return False
    return len({{tuple(t.shape) for t in tensors if t.numel() != 1}}) <= 1
'''

ONE_VALUE = "_graphmend_one_value"
assert ONE_VALUE in TRUE_WHEN_FIXED_NAMES

_ONE_VALUE_TEXT = '''

def {name}(condition):
    """Whether `condition` is a tensor of one element, so that `if condition:` takes its value
    (with more, it raises) and `torch.where` over it, reshaped to 0-d, broadcasts nothing.

    Added by GraphMend: decided from the shape only, so under torch.compile it is settled while
    tracing and costs no graph break; where it is False the original branches run.
    """
    return isinstance(condition, {torch}.Tensor) and condition.numel() == 1
'''

COMPARES_IN_TENSOR = "_graphmend_compares_in_tensor"
assert COMPARES_IN_TENSOR in TRUE_WHEN_FIXED_NAMES

_COMPARES_IN_TENSOR_TEXT = '''

def {name}(value):
    """Whether `value in tensor` compares: `Tensor.__contains__` gives `(value == tensor).any()`
    for a tensor or a Python number and raises for anything else (None, a string, a list).

    Added by GraphMend: decided from the value's type only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False the original test runs (and raises
    as before).
    """
    return isinstance(value, ({torch}.Tensor, bool, int, float, complex))
'''

HOLDS_VALUES = "_graphmend_holds_values"
assert HOLDS_VALUES in TRUE_WHEN_FIXED_NAMES

_HOLDS_VALUES_TEXT = '''

def {name}(tensor, count):
    """Whether `tensor` has one dimension of `count` values, so that unpacking `tensor.unbind(0)`
    into `count` names gives each one the value `tensor.tolist()` gave it, as a 0-d tensor.

    Added by GraphMend: decided from the shape only, so under torch.compile it is settled while
    tracing and costs no graph break; where it is False the original `tolist()` runs, and unpacks
    or raises as before.
    """
    return isinstance(tensor, {torch}.Tensor) and tensor.dim() == 1 and tensor.shape[0] == count
'''

STACKABLE = "_graphmend_stackable"
assert STACKABLE in TRUE_WHEN_FIXED_NAMES

_STACKABLE_TEXT = '''

def {name}(*tensors):
    """Whether `tensors` are 0-d tensors of one dtype on one device, so that `.tolist()` of them
    stacked gives, in one device sync, the numbers each `.item()` gives.

    Added by GraphMend: decided from shapes and dtypes only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False each `.item()` runs, as before.
    """
    first = tensors[0]
    return all(isinstance(t, {torch}.Tensor) and t.dim() == 0 and t.dtype == first.dtype and t.device == first.device for t in tensors)
'''

MASK_SELECTS_ALIKE = "_graphmend_mask_selects_alike"
assert MASK_SELECTS_ALIKE in TRUE_WHEN_FIXED_NAMES

_MASK_SELECTS_ALIKE_TEXT = '''

def {name}(mask, *values, arithmetic=""):
    """Whether `mask` is a boolean tensor with the shape and device of `values`, tensors of one
    dtype: then `x[mask]` holds the elements `torch.where(mask, x, ...)` keeps, so
    `out[mask] = src[mask]` is `out.copy_(torch.where(mask, src, out))` and `x[mask].sum()` is
    `torch.where(mask, x, 0).sum()`. With `arithmetic` ("integer": `+ - *` by ints, "floating":
    also floats and `/`), the dtype must be one such arithmetic keeps (not bool; floating), so the
    value written has `out`'s dtype; not complex, whose products eager CPU rounds differently at
    different positions of a tensor. The first value (`out`) must not be expanded (a stride of 0 over
    more than one element): `out[mask] = ...` writes through it, `out.copy_(...)` refuses.

    Added by GraphMend: decided from dtypes and shapes only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False the original code runs.
    """
    dtype = values[0].dtype if isinstance(values[0], {torch}.Tensor) else None
    return (
        isinstance(mask, {torch}.Tensor)
        and mask.dtype == {torch}.bool
        and all(isinstance(v, {torch}.Tensor) and v.dtype == dtype for v in values)
        and all(v.shape == mask.shape and v.device == mask.device for v in values)
        and all(stride != 0 or size <= 1 for stride, size in zip(values[0].stride(), values[0].shape))
        and (arithmetic != "integer" or (dtype != {torch}.bool and not dtype.is_complex))
        and (arithmetic != "floating" or dtype.is_floating_point)
    )
'''

MASK_ADDS_ROWS = "_graphmend_mask_adds_rows"
assert MASK_ADDS_ROWS in TRUE_WHEN_FIXED_NAMES

_MASK_ADDS_ROWS_TEXT = '''

def {name}(mask, out, value):
    """Whether `out[mask] += value` adds `value` to every element or row `mask` selects as
    `torch.where(mask, out + value, out)` does, with `mask` spread over the rows: `mask` is a
    boolean tensor on `out`'s device with the sizes of `out`'s leading dimensions, and `value` a
    number `out`'s dtype keeps (not bool; a float only for a floating `out`) or a tensor of
    `out`'s dtype and device that broadcasts over one row without growing it (SAM's
    `point_embedding[labels == -1] += self.not_a_point_embed.weight`, a `(1, dim)` weight).

    Added by GraphMend: decided from dtypes and shapes only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False the original code runs.
    """
    if not (
        isinstance(mask, {torch}.Tensor)
        and isinstance(out, {torch}.Tensor)
        and mask.dtype == {torch}.bool
        and mask.device == out.device
        and 0 < mask.dim() <= out.dim()
        and tuple(mask.shape) == tuple(out.shape[: mask.dim()])
        and out.dtype != {torch}.bool
        and all(stride != 0 or size <= 1 for stride, size in zip(out.stride(), out.shape))
    ):
        return False  # (an expanded `out`: `index_put_` writes through it, `copy_` refuses)
    if type(value) in (int, float):
        # not into float16/bfloat16: compiled, the number would be added unrounded (65504 + ... vs inf)
        return out.dtype not in ({torch}.float16, {torch}.bfloat16) and (type(value) is int or out.dtype.is_floating_point)
    if not isinstance(value, {torch}.Tensor) or value.dtype != out.dtype or value.device != out.device:
        return False
    row = tuple(out.shape[mask.dim() :])
    shape = tuple(value.shape)
    if len(shape) == len(row) + 1 and shape[0] == 1:
        shape = shape[1:]
    if len(shape) > len(row) or any(s not in (1, r) for s, r in zip(reversed(shape), reversed(row))):
        return False
    return True
'''

MASK_SELECTS_ROWS = "_graphmend_mask_selects_rows"
assert MASK_SELECTS_ROWS in TRUE_WHEN_FIXED_NAMES

_MASK_SELECTS_ROWS_TEXT = '''

def {name}(mask, rows, labels, loss=None):
    """Whether `mask` is a 1-d boolean tensor over the rows of the 2-d `rows` and of the 1-d integer
    `labels`, all on one device: then `rows[mask]` and `labels[mask]` keep whole rows (a sample's
    scores and its class), which cross_entropy and nll_loss can leave out with `ignore_index`. With
    `loss` (an nn.CrossEntropyLoss or nn.NLLLoss), also that it reduces to one value.

    Added by GraphMend: decided from dtypes, shapes and the loss's settings only, so under
    torch.compile it is settled while tracing and costs no graph break; where it is False the
    original selection runs.
    """
    tensors = all(isinstance(t, {torch}.Tensor) for t in (mask, rows, labels))
    return (
        tensors
        and (loss is None or loss.reduction in ("mean", "sum"))
        and mask.dtype == {torch}.bool
        and (mask.dim(), rows.dim(), labels.dim()) == (1, 2, 1)
        and not (labels.is_floating_point() or labels.is_complex() or labels.dtype == {torch}.bool)
        and mask.shape[0] == rows.shape[0] == labels.shape[0]
        and mask.device == rows.device == labels.device
    )
'''

MASK_SPANS = "_graphmend_mask_spans"
assert MASK_SPANS in TRUE_WHEN_FIXED_NAMES

_MASK_SPANS_TEXT = '''

def {name}(mask, lead, rest, *values):
    """Whether `mask` is a boolean tensor on the device of `values` (tensors of one shape, of any
    dtypes) with the shape of their dimensions from `lead` on (`lead` None: their last ones), with
    at least `rest` dimensions after it: then `x[:, mask]` (lead 1; `x[mask, :]` is lead 0, rest
    1; `x[..., mask]` is lead None) holds the elements `torch.where` keeps under the mask spread
    over those dimensions, so `x[:, mask].sum()` is
    `torch.where(_graphmend_spread_mask(mask, x, 1), x, 0).sum()`.

    Added by GraphMend: decided from dtypes and shapes only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False the original code runs.
    """
    if not (isinstance(mask, {torch}.Tensor) and mask.dtype == {torch}.bool):
        return False
    if not all(isinstance(v, {torch}.Tensor) for v in values):
        return False
    first = values[0]
    alike = all(v.shape == first.shape and v.device == mask.device for v in values)
    start = first.dim() - mask.dim() if lead is None else lead
    end = start + mask.dim()
    return alike and start >= 0 and end + rest <= first.dim() and first.shape[start:end] == mask.shape
'''

SPREAD_MASK = "_graphmend_spread_mask"

_SPREAD_MASK_TEXT = '''

def {name}(mask, value, lead) -> {torch}.Tensor:
    """`mask` with dimensions of size 1 around it, so that it lines up with the dimensions of
    `value` from `lead` on (`lead` None: its last ones) and broadcasts over the others.

    Added by GraphMend, with `_graphmend_mask_spans` (which checks that it lines up): a view,
    shaped while tracing.
    """
    start = value.dim() - mask.dim() if lead is None else lead
    return mask.reshape((1,) * start + tuple(mask.shape) + (1,) * (value.dim() - start - mask.dim()))
'''

FLOAT_DIVISOR = "_graphmend_float_divisor"

_FLOAT_DIVISOR_TEXT = '''

def {name}(divisor):
    """`divisor`, or the ZeroDivisionError Python raises when a float is divided by 0.

    Added by GraphMend: a number kept as a tensor no longer raises when divided by 0 (it gives inf
    or nan); this keeps Python's error. Under torch.compile `divisor` is a Python number dynamo
    knows while tracing, so the test costs no graph break.
    """
    if divisor == 0:
        raise ZeroDivisionError("float division by zero")
    return divisor
'''

INT_DIVISOR = "_graphmend_int_divisor"

_INT_DIVISOR_TEXT = '''

def {name}(divisor):
    """`divisor`, or the ZeroDivisionError Python raises when an integer is divided by 0 (its
    message names a float only when the divisor is one).

    Added by GraphMend: a number kept as a tensor no longer raises when divided by 0 (it gives inf
    or nan); this keeps Python's error. Under torch.compile `divisor` is a Python number dynamo
    knows while tracing, so the test costs no graph break.
    """
    if divisor == 0:
        raise ZeroDivisionError("float division by zero" if isinstance(divisor, float) else "division by zero")
    return divisor
'''

NUMBER_DTYPE = "_graphmend_number_dtype"

_NUMBER_DTYPE_TEXT = '''

def {name}(tensor, number):
    """The dtype a Python int or float `number` is taken at when it meets `tensor` in arithmetic,
    so that a 0-d tensor rounded to it gives `tensor op number`'s result dtype and values (written
    so that dynamo settles it while tracing, at no graph break: `torch.result_type` breaks).

    Added by GraphMend: a number kept as a 0-d tensor is rounded to this dtype first, as Python's
    number was, so the arithmetic gives the same values and dtype. float16 and bfloat16 tensors
    compute in float32 and take a Python number at float32, so a number meeting one with
    dimensions is rounded to float32 (the result keeps the tensor's dtype); a 0-d one takes it at
    its own dtype (rounding a product or quotient once more than Python did: the one case where
    the value can differ, in its last bit).
    """
    if tensor.is_floating_point():
        reduced = tensor.dtype in ({torch}.float16, {torch}.bfloat16) and tensor.dim() > 0
        return {torch}.float32 if reduced else tensor.dtype
    if isinstance(number, float):
        return tensor.dtype if tensor.is_complex() else {torch}.get_default_dtype()
    return {torch}.int64 if tensor.dtype == {torch}.bool else tensor.dtype
'''

DIVIDE_BY_NUMBER = "_graphmend_divide_by_number"

_DIVIDE_BY_NUMBER_TEXT = '''

def {name}(tensor, number, value) -> {torch}.Tensor:
    """`tensor / <Python number>` for a number kept as a 0-d tensor, computed as PyTorch computes
    it: on CUDA, as a product with the reciprocal of the number's float64 `value`, rounded to the
    dtype the division computes in (float32 for float16 and bfloat16, the default float dtype for
    integers; measured on an H200, torch 2.11: 200 of 200 equal, against 7 for a true division);
    elsewhere, and where `value` is still a Python number (a choice that picked another value), a
    true division by `number` (the value rounded as Python's number was).

    Added by GraphMend; under torch.compile the device and dtype are known while tracing, so the
    test costs no graph break.
    """
    if not tensor.is_cuda or not isinstance(value, {torch}.Tensor):
        return tensor / number
    floating = tensor.is_floating_point()
    if tensor.dtype in ({torch}.float16, {torch}.bfloat16):
        compute = {torch}.float32
    else:
        compute = tensor.dtype if floating else {torch}.get_default_dtype()
    quotient = tensor.to(compute) * (1.0 / value.double()).to(compute)
    return quotient.to(tensor.dtype) if floating else quotient
'''

STD_OF = "_graphmend_std_of"

_STD_OF_TEXT = '''

def {name}(variance) -> {torch}.Tensor:
    """The square root of `variance` with the gradient `torch.std` has: where the variance is 0
    (equal values) the gradient is 0, not the infinite one of `sqrt` at 0, and where it is NaN (too
    few elements) the NaN goes back through the variance as it does through `std`.

    Added by GraphMend for a masked `std()`, computed from the variance of the selected elements.
    """
    positive = variance > 0
    root = {torch}.where(positive, variance, 1).sqrt()
    return {torch}.where(positive, root, {torch}.where(variance == 0, variance.detach(), variance))
'''

FLOATING = "_graphmend_floating"
assert FLOATING in TRUE_WHEN_FIXED_NAMES

_FLOATING_TEXT = '''

def {name}(*values):
    """Whether `values` are floating-point or complex tensors: a mean, variance or deviation of
    their selected elements is then a sum divided by a count, where for an integer or boolean
    tensor the original raises (and still does: the original code runs there).

    Added by GraphMend: decided from dtypes only, so under torch.compile it is settled while
    tracing and costs no graph break; where it is False the original code runs.
    """
    return all(isinstance(v, {torch}.Tensor) and (v.is_floating_point() or v.is_complex()) for v in values)
'''

LENGTHS_FIT = "_graphmend_lengths_fit"
assert LENGTHS_FIT in TRUE_WHEN_FIXED_NAMES

_LENGTHS_FIT_TEXT = '''

def {name}(lengths, target, dim):
    """Whether `lengths` holds one integer length per row of `target`, which has dimension `dim`,
    so that comparing positions along `dim` with the lengths marks each row's slice (and `target`
    is not a leaf that requires grad, where the loop raises only if it writes anything).

    Added by GraphMend: decided from shapes and dtypes only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False the original loop runs.
    """
    return (
        isinstance(lengths, {torch}.Tensor)
        and isinstance(target, {torch}.Tensor)
        and lengths.dim() == 1
        and target.dim() > dim
        and lengths.shape[0] == target.shape[0]
        and not lengths.is_floating_point()
        and not lengths.is_complex()
        and lengths.dtype != {torch}.bool
        and not (target.is_leaf and target.requires_grad)
    )
'''

LENGTH_POSITIONS = "_graphmend_length_positions"

_LENGTH_POSITIONS_TEXT = '''

def {name}(lengths, target, dim, prefix):
    """Which elements of `target` the slices `target[i, ..., lengths[i]:]` select (with `prefix`,
    `target[i, ..., :lengths[i]]`), as a mask that broadcasts over `target`. A negative length
    counts from the end, as a slice bound does.

    Added by GraphMend for a loop over the lengths that filled those slices one row at a time.
    """
    size = target.shape[dim]
    positions = {torch}.arange(size, device=target.device)
    bounds = lengths.to(device=target.device, dtype={torch}.int64)  # `bounds + size` must not wrap (int8)
    bounds = {torch}.where(bounds < 0, (bounds + size).clamp(min=0), bounds)[:, None]
    inside = positions < bounds if prefix else positions >= bounds
    return inside.reshape(inside.shape[0], *([1] * (dim - 1)), size, *([1] * (target.dim() - dim - 1)))
'''

SLICE_BOUNDS = "_graphmend_slice_bounds"

_SLICE_BOUNDS_TEXT = '''

def {name}(values, dim=None):
    """`{torch}.tensor(values)`, or its `.cumsum(dim)`, as a list of Python ints where `values` is
    a list or tuple of ints whose entries (and running sums) fit in int64; else that tensor.

    Added by GraphMend for a loop that reads the entries only as slice bounds, where an int and a
    0-d int64 tensor select the same elements: dynamo traces a loop over ints, and breaks on a
    tensor bound. Bools, floats, tensors, nested lists and numbers past int64 (which torch stores
    otherwise, refuses, or wraps when summing) get the tensor, as before.
    """
    if isinstance(values, (list, tuple)) and all(type(v) is int for v in values):
        bounds = list(values)
        if dim is not None:
            total = 0
            for position, value in enumerate(bounds):
                total += value
                bounds[position] = total
        if all(-(2**63) <= v < 2**63 for v in values) and all(-(2**63) <= b < 2**63 for b in bounds):
            return bounds
    tensor = {torch}.tensor(values)
    return tensor if dim is None else tensor.cumsum(dim)
'''

INT_ENTRY = "_graphmend_int_entry"

_INT_ENTRY_TEXT = '''

def {name}(value, tensor, index, bits, scripted=False):
    """`tensor[index]` of a tensor built from `[value]` alone, given as the Python int `value`
    where that is what it holds: an int (not a bool) in the tensor's range (`bits`: 31 for int32,
    63 for int64), read at index 0 or -1; else the tensor's entry, as before. For a helper under
    `torch.jit.script` (`scripted`), which takes only a tensor when it runs, the int only while
    dynamo traces (it runs the helper's Python code then).

    Added by GraphMend for a helper that reads the entry only as a slice bound, where an int and
    a 0-d integer tensor select the same elements: dynamo traces a slice by an int, and breaks on
    a tensor bound. The test is on Python values, a constant while dynamo traces: no break.
    """
    if scripted and not {torch}.compiler.is_compiling():
        return tensor[index]
    if type(value) is int and -(2**bits) <= value < 2**bits and index in (0, -1):
        return value
    return tensor[index]
'''

_TEXTS = {
    INT_ENTRY: _INT_ENTRY_TEXT,
    PRODUCT_KEEPS: _PRODUCT_KEEPS_TEXT,
    COMPLEMENT_KEEPS: _COMPLEMENT_KEEPS_TEXT,
    COUNTS_FIT: _COUNTS_FIT_TEXT,
    BROADCASTABLE: _BROADCASTABLE_TEXT,
    SAME_TYPE: _SAME_TYPE_TEXT,
    HAS_DTYPE: _HAS_DTYPE_TEXT,
    ONE_VALUE: _ONE_VALUE_TEXT,
    BROADCAST_FREE: _BROADCAST_FREE_TEXT,
    HOLDS_VALUES: _HOLDS_VALUES_TEXT,
    COMPARES_IN_TENSOR: _COMPARES_IN_TENSOR_TEXT,
    MASK_SELECTS_ALIKE: _MASK_SELECTS_ALIKE_TEXT,
    MASK_SELECTS_ROWS: _MASK_SELECTS_ROWS_TEXT,
    MASK_SPANS: _MASK_SPANS_TEXT,
    SPREAD_MASK: _SPREAD_MASK_TEXT,
    MASK_ADDS_ROWS: _MASK_ADDS_ROWS_TEXT,
    FLOAT_DIVISOR: _FLOAT_DIVISOR_TEXT,
    INT_DIVISOR: _INT_DIVISOR_TEXT,
    NUMBER_DTYPE: _NUMBER_DTYPE_TEXT,
    DIVIDE_BY_NUMBER: _DIVIDE_BY_NUMBER_TEXT,
    STD_OF: _STD_OF_TEXT,
    FLOATING: _FLOATING_TEXT,
    LENGTHS_FIT: _LENGTHS_FIT_TEXT,
    LENGTH_POSITIONS: _LENGTH_POSITIONS_TEXT,
    STACKABLE: _STACKABLE_TEXT,
    SLICE_BOUNDS: _SLICE_BOUNDS_TEXT,
}


def helper_edits(ctx: FixContext, name: str) -> list[Edit]:
    """The edit defining predicate `name` after the module's `import torch`, or none when the module
    defines it already."""
    if name in ctx.index.functions:
        return []
    line, prefix = helper_insertion(ctx)
    lines = ctx.source.lines
    blank = 0
    while line - 1 + blank < len(lines) and not lines[line - 1 + blank].strip():
        blank += 1
    spacing = "\n" * max(0, 2 - blank)  # two blank lines before the next code, as PEP 8 asks
    return [Edit(Span(line, 0, line, 0), prefix + _TEXTS[name].format(name=name, torch=ctx.torch_name()) + spacing)]


def helper_insertion(ctx: FixContext) -> tuple[int, str]:
    """Where a module-level helper goes: right after the module's `import torch` (with that import
    first when the module has none). Declines when torch is imported under a condition."""
    import_edit = ctx.import_edit()
    if import_edit is not None:
        return import_edit.span.start_line, import_edit.new_text
    line, indent = ctx.torch_bound_at()
    if indent:
        raise DeclineError("guarded-torch-import", "torch is imported under a condition here, so a helper cannot be defined at module level")
    return line, ""


def call_text(name: str, *arguments: str) -> str:
    return f"{name}({', '.join(arguments)})"


def checked_or_original(fixed: str, check: str, original: str) -> str:
    """`(fixed if check else original)`, one part per line when it would make a long line (the
    statement's own indentation is added by libcst when it renders the lines)."""
    one_line = f"({fixed} if {check} else {original})"
    if len(one_line) <= 80 or "\n" in original:
        return one_line
    return f"(\n    {fixed}\n    if {check}\n    else {original}\n)"
