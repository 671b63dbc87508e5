"""Hand rewrite of cases/wo_pytorch_listcomp_item_sqrt.py: the element-wise Python arithmetic on
`.item()` values becomes one float64 tensor expression, detached and cast like `torch.tensor(list)`."""
import math

import torch

KIND = "item-loop"


def forward(x):
    # The Python-float arithmetic of the element loop, on the whole tensor in float64
    return torch.sqrt(x.detach().double().abs() + 1e-8).to(torch.get_default_dtype()).view(x.shape)


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
