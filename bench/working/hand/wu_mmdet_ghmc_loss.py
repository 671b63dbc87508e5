"""Hand rewrite of wu_mmdet_ghmc_loss: no .item(), no nonzero, no boolean-mask writes."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def _expand_onehot_labels(labels, label_weights, label_channels):
    in_range = (labels >= 0) & (labels < label_channels)
    classes = torch.arange(label_channels, device=labels.device)
    bin_labels = ((labels.unsqueeze(1) == classes) & in_range.unsqueeze(1)).to(labels.dtype)
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
        if pred.dim() != target.dim():
            target, label_weight = _expand_onehot_labels(
                target, label_weight, pred.size(-1))
        target, label_weight = target.float(), label_weight.float()
        edges = self.edges
        mmt = self.momentum
        weights = torch.zeros_like(pred)

        g = torch.abs(pred.sigmoid().detach() - target)

        valid = label_weight > 0
        tot = valid.float().sum().clamp(min=1.0)
        n = torch.zeros((), dtype=torch.long, device=pred.device)
        for i in range(self.bins):
            inds = (g >= edges[i]) & (g < edges[i + 1]) & valid
            num_in_bin = inds.sum()
            has = num_in_bin > 0
            if mmt > 0:
                new_acc = mmt * self.acc_sum[i] + (1 - mmt) * num_in_bin
                self.acc_sum[i] = torch.where(has, new_acc, self.acc_sum[i])
                weights = torch.where(inds, tot / self.acc_sum[i], weights)
            else:
                weights = torch.where(inds, tot / num_in_bin.clamp(min=1), weights)
            n = n + has.long()
        weights = weights / n.clamp(min=1)

        loss = F.binary_cross_entropy_with_logits(
            pred, target, weights, reduction='sum') / tot
        return loss * self.loss_weight


KIND = "item-branch"
GRAD = True


def make():
    torch.manual_seed(0)
    return GHMC(bins=6, momentum=0.75, use_sigmoid=True, loss_weight=1.0)


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    C = 4
    for k in range(10):
        n = 5 + k % 3
        pred = torch.randn(n, C, generator=g) * (1 + k % 4)
        if k % 2 == 0:
            target = (torch.rand(n, C, generator=g) < 0.3).float()
            label_weight = (torch.rand(n, C, generator=g) < 0.8).float()
        else:
            target = torch.randint(0, C + 1, (n,), generator=g)
            label_weight = (torch.rand(n, generator=g) < 0.8).float()
        if k == 4:
            label_weight = torch.zeros_like(label_weight)
        if k == 7:
            target = torch.full((n,), C, dtype=torch.long)
        out.append((pred, target, label_weight))
    return out
