"""A parameter compared with a string literal (NeMo's `normalize_batch(x, seq_len,
normalize_type)`: `if normalize_type == "per_feature":`) is a Python bool whatever the parameter
holds: a tensor is never equal to a str, and `==` returns False rather than a tensor. No break."""
import torch


@torch.compile
def f(x, normalize_type):
    if normalize_type == "per_feature":
        return x - x.mean(dim=-1, keepdim=True)
    elif normalize_type != "all_features":
        return x
    return x - x.mean()


def sample():
    return [(f, (torch.randn(2, 4), mode), {}) for mode in ("per_feature", "all_features", "none")] + [
        (f, (torch.randn(2, 4), torch.ones(2)), {})
    ]
