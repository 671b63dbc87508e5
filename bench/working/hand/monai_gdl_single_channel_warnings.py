"""Hand rewrite of monai_gdl_single_channel_warnings: the warnings in an ORDERED custom op."""
import warnings

import torch
import torch.nn as nn
from torch._library.effects import EffectType


@torch.library.custom_op("blind_a::monai_warn_single_channel", mutates_args=())
def _warn_single_channel(input: torch.Tensor, softmax: bool, to_onehot_y: bool, include_background: bool) -> None:
    if softmax:
        warnings.warn("single channel prediction, `softmax=True` ignored.")
    if to_onehot_y:
        warnings.warn("single channel prediction, `to_onehot_y=True` ignored.")
    if not include_background:
        warnings.warn("single channel prediction, `include_background=False` ignored.")


@_warn_single_channel.register_fake
def _(input, softmax, to_onehot_y, include_background):
    return None


_warn_single_channel.register_effect(EffectType.ORDERED)


def one_hot(labels, num_classes, dtype=torch.float, dim=1):
    # if `dim` is bigger, add singleton dim at the end
    if labels.ndim < dim + 1:
        shape = list(labels.shape) + [1] * (dim + 1 - len(labels.shape))
        labels = torch.reshape(labels, shape)

    sh = list(labels.shape)

    if sh[dim] != 1:
        raise AssertionError("labels should have a channel with length equal to one.")

    sh[dim] = num_classes

    o = torch.zeros(size=sh, dtype=dtype, device=labels.device)
    labels = o.scatter_(dim=dim, index=labels.long(), value=1)

    return labels


class GeneralizedDiceLoss(nn.Module):
    def __init__(self, include_background=True, to_onehot_y=False, sigmoid=False, softmax=False,
                 w_type="square", reduction="mean"):
        super().__init__()
        self.reduction = reduction
        self.include_background = include_background
        self.to_onehot_y = to_onehot_y
        if sigmoid and softmax:
            raise ValueError("sigmoid=True and softmax=True are not compatible.")
        self.sigmoid = sigmoid
        self.softmax = softmax

        self.w_func = torch.ones_like
        if w_type == "simple":
            self.w_func = torch.reciprocal
        elif w_type == "square":
            self.w_func = lambda x: torch.reciprocal(x * x)

    def forward(self, input: torch.Tensor, target: torch.Tensor, smooth: float = 1e-5):
        if self.sigmoid:
            input = torch.sigmoid(input)
        n_pred_ch = input.shape[1]
        if n_pred_ch == 1:
            if self.softmax or self.to_onehot_y or not self.include_background:
                _warn_single_channel(input, self.softmax, self.to_onehot_y, self.include_background)
        else:
            if self.softmax:
                input = torch.softmax(input, 1)
            if self.to_onehot_y:
                target = one_hot(target, n_pred_ch)
            if not self.include_background:
                # if skipping background, removing first channel
                target = target[:, 1:]
                input = input[:, 1:]
        assert (
            target.shape == input.shape
        ), f"ground truth has differing shape ({target.shape}) from input ({input.shape})"

        # reducing only spatial dimensions (not batch nor channels)
        reduce_axis = list(range(2, len(input.shape)))
        intersection = torch.sum(target * input, reduce_axis)

        ground_o = torch.sum(target, reduce_axis)
        pred_o = torch.sum(input, reduce_axis)

        denominator = ground_o + pred_o

        w = self.w_func(ground_o.float())
        for b in w:
            infs = torch.isinf(b)
            b[infs] = 0.0
            b[infs] = torch.max(b)

        f = 1.0 - (2.0 * (intersection * w).sum(1) + smooth) / ((denominator * w).sum(1) + smooth)

        if self.reduction == "mean":
            f = torch.mean(f)  # the batch and channel average
        elif self.reduction == "sum":
            f = torch.sum(f)  # sum over the batch and channel dims
        elif self.reduction == "none":
            pass  # returns [N, n_classes] losses
        else:
            raise ValueError(f"reduction={self.reduction} is invalid.")

        return f


class SegHeads(nn.Module):
    def __init__(self, in_ch=2):
        super().__init__()
        self.binary_head = nn.Conv2d(in_ch, 1, 1)
        self.multi_head = nn.Conv2d(in_ch, 3, 1)
        self.loss = GeneralizedDiceLoss(include_background=False, to_onehot_y=True, softmax=True)

    def forward(self, x, label, binary: bool):
        if binary:
            logits = self.binary_head(x)
            return self.loss(torch.sigmoid(logits), label.float())
        logits = self.multi_head(x)
        return self.loss(logits, label)


def make():
    torch.manual_seed(0)
    return SegHeads()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for b, h, w, binary in [(2, 6, 6, True), (1, 5, 7, False), (3, 4, 4, True), (2, 8, 8, False),
                            (1, 6, 6, True), (2, 3, 5, False), (1, 4, 4, True), (4, 5, 5, False)]:
        x = torch.randn(b, 2, h, w, generator=g)
        label = torch.randint(0, 2 if binary else 3, (b, 1, h, w), generator=g)
        out.append((x, label, binary))
    return out


KIND = "warnings"
GRAD = True
