"""MMOCR's DBNet loss (`DBLoss`, text detection with differentiable binarization) with the balanced
BCE probability loss (`bbce_loss=True`): `balance_bce_loss` counts positives and negatives with
`int(...)`, checks the maps' ranges with `assert`s on tensor values, and keeps the hardest negatives
with `torch.topk` whose `k` is the count just read; the threshold map gets a masked L1 loss and the
approximate binary map a dice loss.

Source: https://github.com/open-mmlab/mmocr/blob/28717e3a8c4f4e4d49aa9c196877b65d865c2795/mmocr/models/textdet/losses/db_loss.py
(`DBLoss.balance_bce_loss`, `l1_thr_loss`, `forward`) and
https://github.com/open-mmlab/mmocr/blob/0041bf3596010c1cca5a38af098e5d4628a4f277/mmocr/models/common/losses/dice_loss.py
(`DiceLoss`) (MMOCR 0.x; the DBNet configs use `DBLoss(alpha=5.0, beta=10.0, bbce_loss=True)`).
`forward` takes the ground-truth maps as tensors (the `BitmapMasks` rescaling / padding of
`bitmasks2tensor` is data preparation in NumPy and is left out); registry decorators dropped.
Tiny shapes: batch 1-3, 6x6 to 10x10 maps.

Breaks: `int(positive.float().sum())` and `int(negative.float().sum())` (`Tensor.item()`), and the two
`assert gt.max() <= 1 and gt.min() >= 0` / `assert pred.max() <= 1 and pred.min() >= 0` checks
(data-dependent branches). `torch.topk`'s `k` is then a Python int read from the data.

HAND: the counts stay 0-d tensors (`trunc` of the sums, `torch.minimum`); the asserts move into a
`torch.library.custom_op` with an ORDERED effect that raises the same (message-less) AssertionError
at run time; the sum of the `k` largest negative losses is the sum of the descending-sorted losses
whose rank is below `k` (same value and the same gradient: it flows to the same `k` elements).
"""
import torch
import torch.nn.functional as F
from torch import nn

KIND = "int+assert+topk"
GRAD = True


class DiceLoss(nn.Module):

    def __init__(self, eps=1e-6):
        super().__init__()
        assert isinstance(eps, float)
        self.eps = eps

    def forward(self, pred, target, mask=None):

        pred = pred.contiguous().view(pred.size()[0], -1)
        target = target.contiguous().view(target.size()[0], -1)

        if mask is not None:
            mask = mask.contiguous().view(mask.size()[0], -1)
            pred = pred * mask
            target = target * mask

        a = torch.sum(pred * target)
        b = torch.sum(pred)
        c = torch.sum(target)
        d = (2 * a) / (b + c + self.eps)

        return 1 - d


class DBLoss(nn.Module):
    """The class for implementing DBNet loss."""

    def __init__(self,
                 alpha=1,
                 beta=1,
                 reduction='mean',
                 negative_ratio=3.0,
                 eps=1e-6,
                 bbce_loss=False):
        super().__init__()
        assert reduction in ['mean',
                             'sum'], " reduction must in ['mean','sum']"
        self.alpha = alpha
        self.beta = beta
        self.reduction = reduction
        self.negative_ratio = negative_ratio
        self.eps = eps
        self.bbce_loss = bbce_loss
        self.dice_loss = DiceLoss(eps=eps)

    def balance_bce_loss(self, pred, gt, mask):

        positive = (gt * mask)
        negative = ((1 - gt) * mask)
        positive_count = int(positive.float().sum())
        negative_count = min(
            int(negative.float().sum()),
            int(positive_count * self.negative_ratio))

        assert gt.max() <= 1 and gt.min() >= 0
        assert pred.max() <= 1 and pred.min() >= 0
        loss = F.binary_cross_entropy(pred, gt, reduction='none')
        positive_loss = loss * positive.float()
        negative_loss = loss * negative.float()

        negative_loss, _ = torch.topk(negative_loss.view(-1), negative_count)

        balance_loss = (positive_loss.sum() + negative_loss.sum()) / (
            positive_count + negative_count + self.eps)

        return balance_loss

    def l1_thr_loss(self, pred, gt, mask):
        thr_loss = torch.abs((pred - gt) * mask).sum() / (
            mask.sum() + self.eps)
        return thr_loss

    def forward(self, preds, gt_shrink, gt_shrink_mask, gt_thr, gt_thr_mask):
        pred_prob = preds[:, 0, :, :]
        pred_thr = preds[:, 1, :, :]
        pred_db = preds[:, 2, :, :]

        gt_shrink = (gt_shrink > 0).float()
        if self.bbce_loss:
            loss_prob = self.balance_bce_loss(pred_prob, gt_shrink,
                                              gt_shrink_mask)
        else:
            loss_prob = self.dice_loss(pred_prob, gt_shrink,
                                       gt_shrink_mask)

        loss_db = self.dice_loss(pred_db, gt_shrink,
                                 gt_shrink_mask)
        loss_thr = self.l1_thr_loss(pred_thr, gt_thr,
                                    gt_thr_mask)

        results = dict(
            loss_prob=self.alpha * loss_prob,
            loss_db=loss_db,
            loss_thr=self.beta * loss_thr)

        return results


def make():
    torch.manual_seed(0)
    # DBNet's config: DBLoss(alpha=5.0, beta=10.0, bbce_loss=True)
    return DBLoss(alpha=5.0, beta=10.0, bbce_loss=True)


def _case(g, b, hw, n_text, ignore=0.0):
    """n_text: text boxes per image (0: an image with no text); ignore: fraction of pixels
    masked out (don't-care regions)."""
    preds = torch.sigmoid(torch.randn(b, 3, hw, hw, generator=g))
    gt_shrink = torch.zeros(b, hw, hw)
    for i in range(b):
        for _ in range(n_text):
            y, x = torch.randint(0, hw - 2, (2,), generator=g).tolist()
            h, w = torch.randint(1, 3, (2,), generator=g).tolist()
            gt_shrink[i, y:y + h, x:x + w] = 1.0
    gt_shrink_mask = (torch.rand(b, hw, hw, generator=g) >= ignore).float()
    gt_thr = torch.rand(b, hw, hw, generator=g) * 0.4 + 0.3
    gt_thr_mask = (torch.rand(b, hw, hw, generator=g) < 0.5).float()
    return (preds, gt_shrink, gt_shrink_mask, gt_thr, gt_thr_mask)


def inputs():
    g = torch.Generator().manual_seed(7)
    return [
        _case(g, 2, 8, 2),
        _case(g, 1, 6, 0),               # no text: no positives, k = 0
        _case(g, 2, 8, 4, ignore=0.2),
        _case(g, 3, 6, 1),
        _case(g, 1, 6, 16),              # mostly text: k limited by the negatives
        _case(g, 2, 10, 1, ignore=0.1),
        _case(g, 1, 8, 3, ignore=0.5),
        _case(g, 3, 8, 2),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(8)
    preds, gt_shrink, gt_shrink_mask, gt_thr, gt_thr_mask = _case(g, 1, 6, 2)
    preds = preds.clone()
    preds[0, 0, 0, 0] = 1.5          # a probability map above 1: AssertionError
    return [(preds, gt_shrink, gt_shrink_mask, gt_thr, gt_thr_mask)]
