"""`warnings.warn` on a deprecated argument path splits the graph (GM307)."""
import warnings

import torch


@torch.compile
def attention_scores(q, k, scale=None):
    s = q @ k.transpose(-1, -2)
    if scale is None:
        warnings.warn("scale=None is deprecated", DeprecationWarning)  # expect: GM307
        scale = q.shape[-1] ** -0.5
    return s * scale


def sample():
    return attention_scores, (torch.randn(2, 4), torch.randn(2, 4)), {}
