"""ESPnet's label-smoothing loss for attention decoders: KL divergence against a smoothed one-hot
target, with padding positions ignored and the sum normalised either by the number of non-pad
tokens (read with `.item()`) or by the batch size.

Source: https://github.com/espnet/espnet/blob/master/espnet/nets/pytorch_backend/transformer/label_smoothing_loss.py
(`LabelSmoothingLoss`; the same code is in WeNet before it dropped the `.item()`:
https://github.com/wenet-e2e/wenet/blob/main/wenet/transformer/label_smoothing_loss.py), fed by a
tiny decoder output layer.

Breaks: `total = len(target) - ignore.sum().item()` (`Tensor.item()`).

HAND: keep the count as a 0-d tensor (`len(target) - ignore.sum()`): the division by an int64 0-d
tensor computes the same float32 value and gradient as the division by the Python int.
"""
import torch
from torch import nn


class LabelSmoothingLoss(nn.Module):
    """Label-smoothing loss.

    :param int size: the number of class
    :param int padding_idx: ignored class id
    :param float smoothing: smoothing rate (0.0 means the conventional CE)
    :param bool normalize_length: normalize loss by sequence length if True
    :param torch.nn.Module criterion: loss function to be smoothed
    """

    def __init__(
        self,
        size,
        padding_idx,
        smoothing,
        normalize_length=False,
        criterion=nn.KLDivLoss(reduction="none"),
    ):
        """Construct an LabelSmoothingLoss object."""
        super(LabelSmoothingLoss, self).__init__()
        self.criterion = criterion
        self.padding_idx = padding_idx
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing
        self.size = size
        self.true_dist = None
        self.normalize_length = normalize_length

    def forward(self, x, target):
        """Compute loss between x and target.

        :param torch.Tensor x: prediction (batch, seqlen, class)
        :param torch.Tensor target:
            target signal masked with self.padding_id (batch, seqlen)
        :return: scalar float value
        :rtype torch.Tensor
        """
        assert x.size(2) == self.size
        batch_size = x.size(0)
        x = x.view(-1, self.size)
        target = target.view(-1)
        with torch.no_grad():
            true_dist = x.clone()
            true_dist.fill_(self.smoothing / (self.size - 1))
            ignore = target == self.padding_idx  # (B,)
            total = len(target) - ignore.sum()  # a 0-d tensor
            target = target.masked_fill(ignore, 0)  # avoid -1 index
            true_dist.scatter_(1, target.unsqueeze(1), self.confidence)
        kl = self.criterion(torch.log_softmax(x, dim=1), true_dist)
        denom = total if self.normalize_length else batch_size
        return kl.masked_fill(ignore.unsqueeze(1), 0).sum() / denom


class DecoderOutputLoss(nn.Module):
    def __init__(self, normalize_length):
        super().__init__()
        self.output_layer = nn.Linear(8, 11)
        self.criterion = LabelSmoothingLoss(11, -1, 0.1, normalize_length)

    def forward(self, hs, ys_out_pad):
        return self.criterion(self.output_layer(hs), ys_out_pad)


class Both(nn.Module):
    """length-normalised (ESPnet's `--transformer-length-normalized-loss`) and batch-normalised."""

    def __init__(self):
        super().__init__()
        self.by_length = DecoderOutputLoss(True)
        self.by_batch = DecoderOutputLoss(False)

    def forward(self, hs, ys_out_pad):
        return self.by_length(hs, ys_out_pad), self.by_batch(hs, ys_out_pad)


def make():
    torch.manual_seed(0)
    return Both()


def inputs():
    g = torch.Generator().manual_seed(3)
    calls = []
    for n, (B, L) in enumerate([(2, 5), (3, 4), (1, 6), (2, 7), (4, 3), (2, 5), (3, 6), (1, 3)]):
        hs = torch.randn(B, L, 8, generator=g)
        ys = torch.randint(0, 11, (B, L), generator=g)
        if n % 2 == 0:
            ys[0, L // 2:] = -1       # padded targets (ignore_id = -1)
        calls.append((hs, ys))
    return calls


KIND = "item"
GRAD = True
