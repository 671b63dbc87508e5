"""GHM-C loss (Gradient Harmonized single-stage detector) from MMDetection: per-bin counts of the
gradient norm decide each sample's weight, with a momentum-averaged count per bin kept in a buffer.

Source: https://github.com/open-mmlab/mmdetection/blob/080742cb2311f5815a08ea7e7a49bb768f828ecc/mmdet/models/losses/ghm_loss.py
(GHMC.forward and _expand_onehot_labels, kept as written; the registry decorator is dropped.)

Breaks: `_expand_onehot_labels` (when labels are class indices) calls `torch.nonzero(...)` (dynamic
output shape) and branches on `inds.numel() > 0`; `max(valid.float().sum().item(), 1.0)` and
`num_in_bin = inds.sum().item()` are `Tensor.item()` calls; `if num_in_bin > 0:` then branches on the
count, and `weights[inds] = ...` writes through a boolean mask, in a Python loop over the bins.

HAND: yes — one-hot labels by comparison with an arange (masked by the valid range), `tot` and the
per-bin counts kept as 0-d tensors, the momentum update and the weight assignment selected with
`torch.where` on `num_in_bin > 0`, the number of valid bins `n` accumulated as a tensor and the final
division by `n.clamp(min=1)` (weights are all zero when n == 0, so dividing by 1 is the same).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def _expand_onehot_labels(labels, label_weights, label_channels):
    bin_labels = labels.new_full((labels.size(0), label_channels), 0)
    inds = torch.nonzero((labels >= 0) & (labels < label_channels)).squeeze()
    if inds.numel() > 0:
        bin_labels[inds, labels[inds]] = 1
    bin_label_weights = label_weights.view(-1, 1).expand(
        label_weights.size(0), label_channels)
    return bin_labels, bin_label_weights


class GHMC(nn.Module):
    def __init__(self, bins=10, momentum=0, use_sigmoid=True, loss_weight=1.0):
        super(GHMC, self).__init__()
        self.bins = bins
        self.momentum = momentum
        edges = torch.arange(bins + 1).float() / bins
        self.register_buffer('edges', edges)
        self.edges[-1] += 1e-6
        if momentum > 0:
            acc_sum = torch.zeros(bins)
            self.register_buffer('acc_sum', acc_sum)
        self.use_sigmoid = use_sigmoid
        if not self.use_sigmoid:
            raise NotImplementedError
        self.loss_weight = loss_weight

    def forward(self, pred, target, label_weight, *args, **kwargs):
        # the target should be binary class label
        if pred.dim() != target.dim():
            target, label_weight = _expand_onehot_labels(
                target, label_weight, pred.size(-1))
        target, label_weight = target.float(), label_weight.float()
        edges = self.edges
        mmt = self.momentum
        weights = torch.zeros_like(pred)

        # gradient length
        g = torch.abs(pred.sigmoid().detach() - target)

        valid = label_weight > 0
        tot = max(valid.float().sum().item(), 1.0)
        n = 0  # n valid bins
        for i in range(self.bins):
            inds = (g >= edges[i]) & (g < edges[i + 1]) & valid
            num_in_bin = inds.sum().item()
            if num_in_bin > 0:
                if mmt > 0:
                    self.acc_sum[i] = mmt * self.acc_sum[i] \
                        + (1 - mmt) * num_in_bin
                    weights[inds] = tot / self.acc_sum[i]
                else:
                    weights[inds] = tot / num_in_bin
                n += 1
        if n > 0:
            weights = weights / n

        loss = F.binary_cross_entropy_with_logits(
            pred, target, weights, reduction='sum') / tot
        return loss * self.loss_weight


KIND = "item-branch"
GRAD = True


def make():
    torch.manual_seed(0)
    # the RetinaNet-GHM config: bins=30, momentum=0.75; fewer bins here
    return GHMC(bins=6, momentum=0.75, use_sigmoid=True, loss_weight=1.0)


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    C = 4
    for k in range(10):
        n = 5 + k % 3
        pred = torch.randn(n, C, generator=g) * (1 + k % 4)
        if k % 2 == 0:  # one-hot float targets, same dim as pred
            target = (torch.rand(n, C, generator=g) < 0.3).float()
            label_weight = (torch.rand(n, C, generator=g) < 0.8).float()
        else:  # class-index labels (C = background), per-sample weights
            target = torch.randint(0, C + 1, (n,), generator=g)
            label_weight = (torch.rand(n, generator=g) < 0.8).float()
        if k == 4:  # every sample ignored: tot = 1.0, no valid bin
            label_weight = torch.zeros_like(label_weight)
        if k == 7:  # only background labels: nonzero finds nothing
            target = torch.full((n,), C, dtype=torch.long)
        out.append((pred, target, label_weight))
    return out
