"""A base class's `forward` calls a method only its subclasses define (kornia's augmentation base
calls `self.apply_func`): the inherited `forward` runs as the instance's class, so the subclass's
method is the one dynamo traces, and its break is reached from the model."""
from typing import Dict

import torch
from torch import Tensor, nn


class AugmentationBase(nn.Module):
    def forward(self, x, params=None):
        if params is None:
            params = {"batch_prob": torch.rand(x.shape[0]) < 0.5}
        return self.apply_func(x, params)


class MaskedFlip(AugmentationBase):
    def apply_func(self, x: Tensor, params: Dict[str, Tensor]) -> Tensor:
        to_apply = params["batch_prob"]
        if not to_apply.any():  # expect: GM101
            return x
        return torch.where(to_apply[:, None], x.flip(-1), x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.aug = MaskedFlip()
        self.head = nn.Linear(4, 2)

    def forward(self, x, params=None):
        return self.head(self.aug(x, params))


def sample():
    model = torch.compile(Model(), backend="eager")
    return [
        (model, (torch.randn(3, 4), {"batch_prob": torch.tensor([True, False, True])}), {}),
        (model, (torch.randn(3, 4), {"batch_prob": torch.tensor([False, False, False])}), {}),
    ]
