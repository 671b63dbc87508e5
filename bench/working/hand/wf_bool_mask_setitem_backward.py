"""Hand rewrite of cases/wf_bool_mask_setitem_backward.py: the boolean-mask copy is a
`torch.where` against zeros."""
import torch

KIND = "bool-mask-setitem"
GRAD = True


def test(y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    x = torch.where(y, z, torch.zeros_like(y, dtype=z.dtype))
    x = x * 2
    return x


def make():
    return test


def inputs():
    g = torch.Generator().manual_seed(2)

    def z(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g, dtype=dtype).requires_grad_()

    def y(*shape):
        return torch.randint(0, 2, shape, generator=g) == 1

    return [
        (y(10, 10), z(10, 10)),
        (y(4), z(4)),
        (torch.zeros(3, 3, dtype=torch.bool), z(3, 3)),           # nothing selected
        (torch.ones(2, 5, dtype=torch.bool), z(2, 5)),            # everything selected
        (y(3, 4), z(3, 4, dtype=torch.float64)),
        (y(2, 3, 4), z(2, 3, 4)),
        (torch.tensor([True, False, True]), torch.tensor([1.0, float("nan"), -2.0], requires_grad=True)),
        (y(6, 1), z(6, 1)),
        (y(5, 5), torch.randn(5, 5, generator=g)),                # no grad
    ]
