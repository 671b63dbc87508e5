"""BatchNorm applied to a boolean-masked subset of rows and written back in place
(`out[mask_bool] = self.norm(h[mask_bool])`), the minimal repro of a pytorch issue about masked
normalisation under torch.compile.

Source: https://github.com/pytorch/pytorch/issues/194166 ("Inductor backend exception ... on
aten.nonzero.default from boolean-mask assignment": `MaskedBN`, BatchNorm1d(8) on the rows selected
by `mask_bool`, written back into a clone of `h`). Here a SiLU follows, as in the layer such a
normalisation sits in (with a plain sum as the loss the BatchNorm weight's gradient would be a sum
of normalised values, zero up to rounding).

Breaks: `h[mask_bool]` (boolean-mask gather, `aten.nonzero`: a dynamic-shape operator) and the
boolean-mask assignment `out[mask_bool] = ...` on the same line.

HAND: the batch statistics are computed over the masked rows with masked sums (mean, biased
variance for normalising, unbiased for `running_var`, momentum 0.1, `num_batches_tracked` += 1),
every row is normalised with them and `torch.where(mask, normed, h)` keeps the unselected rows:
same output, running statistics and gradients. Inputs select at least two rows (BatchNorm's own
"more than 1 value per channel" check, an API check of the op, is not reproduced).
"""
import torch

KIND = "bool-mask-setitem"
GRAD = True


class MaskedBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(8)

    def forward(self, h, mask_bool):
        out = h.clone()
        out[mask_bool] = self.norm(h[mask_bool])
        return torch.nn.functional.silu(out)


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
