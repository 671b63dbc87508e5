"""A loss function of the module chosen in `__init__` and held in an attribute
(MMSegmentation's `self.cls_criterion = binary_cross_entropy`): calling the attribute runs that
function, compiled with the forward, so its `.item()` breaks. `F._Reduction.get_enum` returns a
Python int (not a tensor as `F.*` functions do): branching on it does not break."""
import torch
import torch.nn.functional as F
from torch import nn


def reduce_loss(loss, reduction):
    reduction_enum = F._Reduction.get_enum(reduction)
    if reduction_enum == 0:
        return loss
    return loss.mean() if reduction_enum == 1 else loss.sum()


def masked_l1(pred, target, reduction="mean"):
    valid = (target >= 0).float()
    loss = (pred - target).abs() * valid
    count = valid.sum().item()  # expect: GM201
    return reduce_loss(loss, reduction) * (loss.numel() / max(count, 1.0))


def masked_l2(pred, target, reduction="mean"):
    return reduce_loss((pred - target) ** 2, reduction)


class Criterion(nn.Module):
    def __init__(self, squared=False):
        super().__init__()
        if squared:
            self.criterion = masked_l2
        else:
            self.criterion = masked_l1

    def forward(self, pred, target):
        return self.criterion(pred, target, reduction="mean")


def sample():
    target = torch.tensor([[0.5, -1.0], [1.0, 2.0]])
    return [(Criterion(), (torch.randn(2, 2), target), {}), (Criterion(squared=True), (torch.randn(2, 2), target), {})]
