"""Hand rewrite of ultralytics_predict_augment_warning: the warning in an ORDERED custom op."""
import logging

import torch
import torch.nn as nn
from torch._library.effects import EffectType

LOGGER = logging.getLogger(__name__)


@torch.library.custom_op("blind_a::ultralytics_log_no_augment", mutates_args=())
def _log_no_augment(x: torch.Tensor, cls_name: str) -> None:
    LOGGER.warning(
        f"{cls_name} does not support 'augment=True' prediction. "
        f"Reverting to single-scale prediction."
    )


@_log_no_augment.register_fake
def _(x, cls_name):
    return None


_log_no_augment.register_effect(EffectType.ORDERED)


class Conv(nn.Module):
    def __init__(self, c1, c2, k=3, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Concat(nn.Module):
    def __init__(self, dimension=1):
        super().__init__()
        self.d = dimension

    def forward(self, x):
        return torch.cat(x, self.d)


class Classify(nn.Module):
    def __init__(self, c1, c2):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.linear = nn.Linear(c1, c2)

    def forward(self, x):
        if isinstance(x, list):
            x = torch.cat(x, 1)
        x = self.linear(self.pool(x).flatten(1))
        return x if self.training else x.softmax(1)


class BaseModel(nn.Module):
    def forward(self, x, *args, **kwargs):
        if isinstance(x, dict):  # for cases of training and validating while training.
            return self.loss(x, *args, **kwargs)
        return self.predict(x, *args, **kwargs)

    def predict(self, x, profile=False, visualize=False, augment=False, embed=None):
        if augment:
            return self._predict_augment(x)
        return self._predict_once(x, profile, visualize, embed)

    def _predict_once(self, x, profile=False, visualize=False, embed=None):
        y, dt, embeddings = [], [], []  # outputs
        embed = frozenset(embed) if embed is not None else {-1}
        max_idx = max(embed)
        for m in self.model:
            if m.f != -1:  # if not from previous layer
                x = y[m.f] if isinstance(m.f, int) else [x if j == -1 else y[j] for j in m.f]  # from earlier layers
            x = m(x)  # run
            y.append(x if m.i in self.save else None)  # save output
            if m.i in embed:
                embeddings.append(torch.nn.functional.adaptive_avg_pool2d(x, (1, 1)).squeeze(-1).squeeze(-1))  # flatten
                if m.i == max_idx:
                    return torch.unbind(torch.cat(embeddings, 1), dim=0)
        return x

    def _predict_augment(self, x):
        _log_no_augment(x, self.__class__.__name__)
        return self._predict_once(x)


class ClassificationModel(BaseModel):
    def __init__(self, ch=3, nc=4):
        super().__init__()
        layers = [Conv(ch, 4, 3, 2), Conv(4, 4, 3, 1), Concat(1), Classify(8, nc)]
        froms = [-1, -1, [-1, 0], -1]
        for i, (m, f) in enumerate(zip(layers, froms)):
            m.i, m.f, m.type = i, f, type(m).__name__
        self.model = nn.Sequential(*layers)
        self.save = [0]
        self.eval()


def make():
    torch.manual_seed(0)
    return ClassificationModel()


def inputs():
    g = torch.Generator().manual_seed(0)
    return [
        (torch.randn(1, 3, 8, 8, generator=g), False, False, True),
        (torch.randn(2, 3, 8, 8, generator=g),),
        (torch.randn(1, 3, 6, 10, generator=g), False, False, True),
        (torch.randn(2, 3, 8, 8, generator=g), False, False, False, [1, 2]),
        (torch.randn(3, 3, 4, 4, generator=g), False, False, True),
        (torch.randn(1, 3, 8, 8, generator=g), False, False, False, [0]),
        (torch.randn(2, 3, 12, 12, generator=g), False, False, True),
        (torch.randn(1, 3, 8, 8, generator=g), False, False, False),
    ]


KIND = "logging"
