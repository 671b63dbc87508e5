"""A user's forward that converts every tensor element to a Python scalar with `.item()` inside a
list comprehension, applies `math.sqrt(abs(v) + 1e-8)` to each, and rebuilds a tensor of the input's
shape from the list.

Source: https://github.com/pytorch/pytorch/issues/180845 ("[Dynamo] Unsupported Tensor.item() call
in list comprehension when capture_scalar_outputs=False": "When using Tensor.item() inside a Python
list comprehension to convert tensor elements to Python scalars for mathematical operations (e.g.,
math.sqrt), Dynamo fails with Unsupported Tensor.item() call"), the reporter's code as posted.
Reduced: inputs of 2-12 elements instead of 4x10; `fullgraph=True` is not used (the benchmark counts
the breaks).

Breaks: `result_list = [math.sqrt(abs(val.item()) + 1e-8) for val in x.flatten()]` (Tensor.item()
in a Python loop over the tensor's elements; one break per element).

HAND: the same arithmetic on the whole tensor in float64 (what `math.sqrt`/`abs` on Python floats
compute), detached and cast to the default dtype like `torch.tensor(result_list)`:
`torch.sqrt(x.detach().double().abs() + 1e-8).to(torch.get_default_dtype()).view(x.shape)`; the site
is removed.
"""
import math

import torch

KIND = "item-loop"


def forward(x):
    # Convert tensor to Python list using item() calls
    result_list = [math.sqrt(abs(val.item()) + 1e-8) for val in x.flatten()]
    return torch.tensor(result_list).view(x.shape)


def make():
    return forward


def inputs():
    g = torch.Generator().manual_seed(12)
    return [
        (torch.randn(2, 3, generator=g),),
        (torch.randn(4, generator=g),),
        (torch.zeros(2, 2),),                                   # sqrt(1e-8)
        (torch.tensor([[-4.0, 9.0], [1e-12, -0.25]]),),
        (torch.randn(3, 1, 2, generator=g, dtype=torch.float64),),
        (torch.randn(1, 5, generator=g) * 1e4,),
        (torch.tensor([3.0]),),
        (torch.randn(2, 6, generator=g, requires_grad=True),),  # result does not track gradients
    ]
