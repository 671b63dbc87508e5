"""Hand rewrite of cases/wi_mmocr_db_balance_bce.py. In `balance_bce_loss` the counts stay 0-d
tensors (`torch.trunc` of the sums, as `int()` of a non-negative float; `torch.minimum`), the two
asserts move into a `torch.library.custom_op` with an ORDERED effect (`check_maps`) that evaluates the
same conditions and raises the same AssertionError at run time, and the top-`k` negatives are summed
as the descending-sorted negative losses whose rank is below `k` (the same elements, so the same
value and gradient).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch._library.effects import EffectType

KIND = "int+assert+topk"
GRAD = True


def _check_maps_impl(pred: torch.Tensor, gt: torch.Tensor) -> None:
    assert gt.max() <= 1 and gt.min() >= 0
    assert pred.max() <= 1 and pred.min() >= 0


_NS = "wi_mmocr_db_balance_bce_hand"
try:
    check_maps = torch.library.custom_op(f"{_NS}::check_maps", mutates_args=())(_check_maps_impl)
    check_maps.register_fake(lambda pred, gt: None)
    torch.library._register_effectful_op(f"{_NS}::check_maps", EffectType.ORDERED)
except RuntimeError:  # already defined by an earlier import of this file in the same process
    check_maps = getattr(getattr(torch.ops, _NS), "check_maps").default


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
        # int() of these non-negative sums, kept as 0-d tensors
        positive_count = torch.trunc(positive.float().sum())
        negative_count = torch.minimum(
            torch.trunc(negative.float().sum()),
            torch.trunc(positive_count * self.negative_ratio))

        # the same asserts, raised at run time from inside the graph
        check_maps(pred, gt)
        loss = F.binary_cross_entropy(pred, gt, reduction='none')
        positive_loss = loss * positive.float()
        negative_loss = loss * negative.float()

        # sum of the negative_count largest negative losses
        sorted_negative_loss, _ = torch.sort(negative_loss.view(-1), descending=True)
        rank = torch.arange(sorted_negative_loss.numel(), device=sorted_negative_loss.device)
        negative_loss = sorted_negative_loss * (rank < negative_count)

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
