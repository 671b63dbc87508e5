"""A mask compared from the `.values` field of a reduction along a dimension (`max(dim=1)`,
`torch.max(x, dim=1)`, `topk`): the field is a tensor, so indexing with the comparison is a
boolean-mask gather. The `[0]` and unpacked forms, and `.indices` used as an integer index (a
gather of fixed shape), for contrast."""
import torch


def sample():
    return [(f, (torch.randn(8, 4), torch.rand(8, 5)), {})]


@torch.compile
def f(pred, ious):
    matched = ious.max(dim=1).values > 0.5
    a = pred[matched].sum()  # expect: GM402
    best = torch.max(ious, dim=1).values
    b = pred[best > 0.4].sum()  # expect: GM402
    top = ious.topk(2, dim=1).indices
    return a + b + pred[top[:, 0]].sum()
