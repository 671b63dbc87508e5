"""Filtering every tensor of a dict in place with a boolean mask, inside a nested function — the
repro of a pytorch issue, here applied to a detection-style batch dict (boxes, scores, labels)
that is then summarised.

Source: https://github.com/pytorch/pytorch/issues/99609 ("[torch.compile] dynamic
Tensor.__getitem__(bool[]) graph break": `def inner(t): for k, v in a.items(): a[k] = v[t]`
called as `inner(t2 < 1)`; the reporter noticed the break only appears when the loop sits in the
nested function).

Breaks: `batch[k] = v[t]` (indexing with a boolean mask: data-dependent output shape).

HAND: none — the number of kept rows, and so the shapes of the tensors written back into the
caller's dict, is read from the data.
"""
import torch

KIND = "bool-mask-dict"


def filter_batch(batch, scores, threshold):
    def inner(t):
        for k, v in batch.items():
            batch[k] = v[t]

    inner(scores > threshold)
    total_area = ((batch["boxes"][:, 2:] - batch["boxes"][:, :2]).clamp(min=0).prod(-1)).sum()
    return batch, total_area


def make():
    return filter_batch


def _batch(g, n):
    xy = torch.rand(n, 2, generator=g)
    wh = torch.rand(n, 2, generator=g)
    return {
        "boxes": torch.cat([xy, xy + wh], dim=1),
        "labels": torch.randint(0, 5, (n,), generator=g),
        "feat": torch.randn(n, 3, generator=g),
    }


def inputs():
    g = torch.Generator().manual_seed(7)
    return [
        (_batch(g, 4), torch.tensor([0.9, 0.1, 0.6, 0.3]), 0.5),
        (_batch(g, 3), torch.tensor([0.2, 0.1, 0.05]), 0.5),
        (_batch(g, 3), torch.tensor([0.7, 0.8, 0.99]), 0.5),
        (_batch(g, 5), torch.rand(5, generator=g), 0.25),
        (_batch(g, 1), torch.tensor([0.5]), 0.5),
        (_batch(g, 6), torch.rand(6, generator=g), 0.0),
        (_batch(g, 2), torch.tensor([1.0, 0.0]), 0.9),
        (_batch(g, 4), torch.tensor([0.3, 0.3, 0.3, 0.3]), 0.2),
    ]
