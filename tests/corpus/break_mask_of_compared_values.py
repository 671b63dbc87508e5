"""An index built of elementwise comparisons selects with a boolean mask even where the compared
values' kinds are unknown (`*inputs` here; a forward's `labels` in sentence-transformers'
OnlineContrastiveLoss, torchmetrics' explained_variance): a tensor indexed by such a comparison,
and a value indexed by a comparison of itself (a number cannot be indexed, a list compares to a
plain bool). `torch.tensor([True])` is a bool tensor, so a `torch.cat` of it with a comparison is
a mask too (torchmetrics' `_find_repeats`). Assigning through such a mask, indexing a tuple with a
comparison of other values, and a `torch.tensor` of bools given an integer dtype do not break."""
import torch
import torch.nn.functional as F


class Contrastive(torch.nn.Module):
    def forward(self, *inputs):
        a, b, labels = inputs
        distance = 1 - F.cosine_similarity(a, b)
        negs = distance[labels == 0]  # expect: GM402
        return negs.sum()


class Kept(torch.nn.Module):
    def forward(self, *inputs):
        a, b, labels, names, flag = inputs
        distance = 1 - F.cosine_similarity(a, b)
        distance[labels == 0] = 0.0
        return distance * len(names[flag == 1])


def explained(*inputs):
    numerator, denominator = inputs
    valid = (numerator != 0) & (denominator != 0)
    out = torch.ones(3)
    out[valid] = 1.0 - numerator[valid] / denominator[valid]  # expect: GM402
    return out


def unique_sorted(data):
    temp = data.sort()[0]
    change = torch.cat([torch.tensor([True], device=temp.device), temp[1:] != temp[:-1]])
    return temp[change] + 1  # expect: GM402


def first_twice(data):
    temp = data.sort()[0]
    picked = torch.cat([torch.tensor([True, False], dtype=torch.long), torch.zeros(1, dtype=torch.long)])
    return temp[picked] + 1


contrastive = torch.compile(Contrastive())
kept = torch.compile(Kept())
explained = torch.compile(explained)
unique_sorted = torch.compile(unique_sorted)
first_twice = torch.compile(first_twice)


def sample():
    a, b = torch.randn(4, 3), torch.randn(4, 3)
    labels = torch.tensor([0, 1, 0, 1])
    return [
        (contrastive, (a, b, labels), {}),
        (kept, (a, b, labels, ("short", "longer"), 1), {}),
        (explained, (torch.tensor([1.0, 0.0, 2.0]), torch.tensor([2.0, 1.0, 0.0])), {}),
        (unique_sorted, (torch.tensor([3.0, 1.0, 1.0, 2.0]),), {}),
        (first_twice, (torch.tensor([3.0, 1.0, 1.0, 2.0]),), {}),
    ]
