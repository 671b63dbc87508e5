"""Hand rewrite of cases/wf_masked_batchnorm_setitem.py: BatchNorm's training-mode statistics over
the masked rows are computed with masked sums, and `torch.where` keeps the unselected rows."""
import torch

KIND = "bool-mask-setitem"
GRAD = True


class MaskedBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(8)

    def forward(self, h, mask_bool):
        bn = self.norm
        sel = mask_bool.unsqueeze(-1)
        if bn.training:
            w = sel.to(h.dtype)
            n = w.sum(0)                                  # rows selected, per channel (>= 2)
            mean = (h * w).sum(0) / n
            centered = (h - mean) * w
            var = (centered * centered).sum(0) / n        # biased, used to normalise
            with torch.no_grad():
                bn.num_batches_tracked.add_(1)
                momentum = bn.momentum
                bn.running_mean.copy_(momentum * mean + (1 - momentum) * bn.running_mean)
                bn.running_var.copy_(momentum * (var * n / (n - 1)) + (1 - momentum) * bn.running_var)
        else:
            mean, var = bn.running_mean, bn.running_var
        normed = (h - mean) * torch.rsqrt(var + bn.eps) * bn.weight + bn.bias
        return torch.nn.functional.silu(torch.where(sel, normed, h))


def make():
    torch.manual_seed(0)
    m = MaskedBN().double()  # float64: BatchNorm's input gradient cancels heavily on 2-3 rows
    with torch.no_grad():
        m.norm.weight.uniform_(0.5, 1.5)
        m.norm.bias.uniform_(-0.5, 0.5)
    return m


def inputs():
    g = torch.Generator().manual_seed(3)

    def h(n):
        return (torch.randn(n, 8, generator=g, dtype=torch.float64) * 2 + 0.5).requires_grad_()

    return [
        (h(6), torch.tensor([True, False, True, True, False, True])),
        (h(6), torch.ones(6, dtype=torch.bool)),                          # every row
        (h(5), torch.tensor([False, True, False, False, True])),          # two rows
        (h(8), torch.rand(8, generator=g) > 0.3),
        (h(4), torch.tensor([True, True, True, False])),
        (h(7), torch.tensor([False, False, True, True, True, False, True])),
        (h(10), torch.arange(10) % 2 == 0),
        (h(3), torch.tensor([True, True, False])),
        (h(9), torch.arange(9) >= 4),
    ]
