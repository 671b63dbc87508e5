"""detectron2 RetinaNet.losses (focal classification loss + smooth-L1 box loss, EMA loss normalizer).

Source: https://github.com/facebookresearch/detectron2/blob/main/detectron2/modeling/meta_arch/retinanet.py
        (RetinaNet.losses), https://github.com/facebookresearch/detectron2/blob/main/detectron2/modeling/meta_arch/dense_detector.py
        (DenseDetector._ema_update), https://github.com/facebookresearch/detectron2/blob/main/detectron2/modeling/box_regression.py
        (Box2BoxTransform.get_deltas, _dense_box_regression_loss), fvcore sigmoid_focal_loss / smooth_l1_loss.
        Reduced: anchors are plain tensors (the `cat(anchors)` path), the EventStorage put_scalar call is omitted.

Breaks: `num_pos_anchors = pos_mask.sum().item()` feeds a Python `max(num_pos_anchors, 1)` and the
Python-float EMA normalizer; `assert (src_widths > 0).all().item(), ...` in get_deltas;
boolean-mask gathers `cat(pred_logits, dim=1)[valid_mask]`, `gt_labels[valid_mask]` and
`cat(pred_anchor_deltas, dim=1)[fg_mask]` (dynamic output shapes).

(hand rewrite)
HAND: the count stays a 0-d tensor (clamp(min=1), EMA kept as a 0-d float64 tensor attribute); the
mask gathers become masked sums (labels of ignored anchors mapped to the background column, losses
zeroed with torch.where); the get_deltas assert becomes an ordered custom-op check that raises the
same AssertionError.
"""
from typing import List

import torch
import torch.nn.functional as F
from torch import nn
from torch._higher_order_ops.effects import _EffectType, _register_effectful_op

KIND = ".item() + bool-mask gather"
GRAD = True

_NS = "wt_d2_retinanet"
if not hasattr(getattr(torch.ops, _NS), "check"):

    @torch.library.custom_op(f"{_NS}::check", mutates_args=())
    def _check_op(ok: torch.Tensor, msg: str) -> None:
        if not bool(ok):
            raise AssertionError(msg)

    @_check_op.register_fake
    def _(ok, msg):
        return None

    _register_effectful_op(getattr(torch.ops, _NS).check.default, _EffectType.ORDERED)


def _assert(ok, msg):
    getattr(torch.ops, _NS).check(ok, msg)


def cat(tensors: List[torch.Tensor], dim: int = 0):
    assert isinstance(tensors, (list, tuple))
    if len(tensors) == 1:
        return tensors[0]
    return torch.cat(tensors, dim)


def sigmoid_focal_loss(inputs, targets, alpha: float = -1, gamma: float = 2, reduction: str = "none"):
    inputs = inputs.float()
    targets = targets.float()
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)

    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss

    if reduction == "mean":
        loss = loss.mean()
    elif reduction == "sum":
        loss = loss.sum()

    return loss


def smooth_l1_loss(input, target, beta: float, reduction: str = "none"):
    if beta < 1e-5:
        loss = torch.abs(input - target)
    else:
        n = torch.abs(input - target)
        cond = n < beta
        loss = torch.where(cond, 0.5 * n**2 / beta, n - 0.5 * beta)

    if reduction == "mean":
        loss = loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
    elif reduction == "sum":
        loss = loss.sum()
    return loss


class Box2BoxTransform:
    def __init__(self, weights, scale_clamp: float = 4.135166556742356):
        self.weights = weights
        self.scale_clamp = scale_clamp

    def get_deltas(self, src_boxes, target_boxes):
        assert isinstance(src_boxes, torch.Tensor), type(src_boxes)
        assert isinstance(target_boxes, torch.Tensor), type(target_boxes)

        src_widths = src_boxes[:, 2] - src_boxes[:, 0]
        src_heights = src_boxes[:, 3] - src_boxes[:, 1]
        src_ctr_x = src_boxes[:, 0] + 0.5 * src_widths
        src_ctr_y = src_boxes[:, 1] + 0.5 * src_heights

        target_widths = target_boxes[:, 2] - target_boxes[:, 0]
        target_heights = target_boxes[:, 3] - target_boxes[:, 1]
        target_ctr_x = target_boxes[:, 0] + 0.5 * target_widths
        target_ctr_y = target_boxes[:, 1] + 0.5 * target_heights

        wx, wy, ww, wh = self.weights
        dx = wx * (target_ctr_x - src_ctr_x) / src_widths
        dy = wy * (target_ctr_y - src_ctr_y) / src_heights
        dw = ww * torch.log(target_widths / src_widths)
        dh = wh * torch.log(target_heights / src_heights)

        deltas = torch.stack((dx, dy, dw, dh), dim=1)
        _assert((src_widths > 0).all(), "Input boxes to Box2BoxTransform are not valid!")
        return deltas


def _dense_box_regression_loss(anchors, box2box_transform, pred_anchor_deltas, gt_boxes, fg_mask,
                               box_reg_loss_type="smooth_l1", smooth_l1_beta=0.0):
    anchors = cat(anchors)
    if box_reg_loss_type == "smooth_l1":
        gt_anchor_deltas = [box2box_transform.get_deltas(anchors, k) for k in gt_boxes]
        gt_anchor_deltas = torch.stack(gt_anchor_deltas)  # (N, R, 4)
        # masked sum instead of the boolean-mask gather; non-fg targets replaced by 0 (safe operand)
        fg = fg_mask.unsqueeze(-1)
        per_elem = smooth_l1_loss(
            cat(pred_anchor_deltas, dim=1),
            torch.where(fg, gt_anchor_deltas, torch.zeros_like(gt_anchor_deltas)),
            beta=smooth_l1_beta,
            reduction="none",
        )
        loss_box_reg = torch.where(fg, per_elem, torch.zeros_like(per_elem)).sum()
    else:
        raise ValueError(f"Invalid dense box regression loss type '{box_reg_loss_type}'")
    return loss_box_reg


class RetinaNet(nn.Module):
    def __init__(self, num_classes=3, focal_loss_alpha=0.25, focal_loss_gamma=2.0, smooth_l1_beta=0.1):
        super().__init__()
        self.num_classes = num_classes
        self.focal_loss_alpha = focal_loss_alpha
        self.focal_loss_gamma = focal_loss_gamma
        self.smooth_l1_beta = smooth_l1_beta
        self.box_reg_loss_type = "smooth_l1"
        self.box2box_transform = Box2BoxTransform(weights=(1.0, 1.0, 1.0, 1.0))

    def _ema_update(self, name: str, value: float, initial_value: float, momentum: float = 0.9):
        old = getattr(self, name, initial_value)
        new = old * momentum + value * (1 - momentum)
        setattr(self, name, new)
        return new

    def losses(self, anchors, pred_logits, gt_labels, pred_anchor_deltas, gt_boxes):
        num_images = len(gt_labels)
        gt_labels = torch.stack(gt_labels)  # (N, R)

        valid_mask = gt_labels >= 0
        pos_mask = (gt_labels >= 0) & (gt_labels != self.num_classes)
        num_pos_anchors = pos_mask.sum()
        normalizer = self._ema_update("loss_normalizer", num_pos_anchors.clamp(min=1).double(), 100)

        # classification and regression loss (ignored anchors masked out instead of gathered)
        labels_safe = torch.where(valid_mask, gt_labels, torch.full_like(gt_labels, self.num_classes))
        gt_labels_target = F.one_hot(labels_safe, num_classes=self.num_classes + 1)[
            ..., :-1
        ]  # no loss for the last (background) class
        per_elem = sigmoid_focal_loss(
            cat(pred_logits, dim=1),
            gt_labels_target.to(pred_logits[0].dtype),
            alpha=self.focal_loss_alpha,
            gamma=self.focal_loss_gamma,
            reduction="none",
        )
        vm = valid_mask.unsqueeze(-1)
        loss_cls = torch.where(vm, per_elem, torch.zeros_like(per_elem)).sum()

        loss_box_reg = _dense_box_regression_loss(
            anchors,
            self.box2box_transform,
            pred_anchor_deltas,
            gt_boxes,
            pos_mask,
            box_reg_loss_type=self.box_reg_loss_type,
            smooth_l1_beta=self.smooth_l1_beta,
        )

        return {
            "loss_cls": loss_cls / normalizer.to(loss_cls.dtype),
            "loss_box_reg": loss_box_reg / normalizer.to(loss_box_reg.dtype),
        }


def make():
    torch.manual_seed(0)
    return RetinaNet().losses


def _anchors(seed, sizes=(5, 3)):
    g = torch.Generator().manual_seed(seed)
    out = []
    for r in sizes:
        xy = torch.rand(r, 2, generator=g) * 10
        wh = torch.rand(r, 2, generator=g) * 4 + 1
        out.append(torch.cat([xy, xy + wh], dim=1))
    return out


def _case(seed, n=2, sizes=(5, 3), labels=None, k=3):
    g = torch.Generator().manual_seed(seed + 100)
    anchors = _anchors(seed, sizes)
    R = sum(sizes)
    pred_logits = [torch.randn(n, r, k, generator=g) for r in sizes]
    pred_deltas = [torch.randn(n, r, 4, generator=g) * 0.3 for r in sizes]
    if labels is None:
        labels = [torch.randint(-1, k + 1, (R,), generator=g) for _ in range(n)]
    gt_boxes = []
    for _ in range(n):
        xy = torch.rand(R, 2, generator=g) * 10
        wh = torch.rand(R, 2, generator=g) * 4 + 0.5
        gt_boxes.append(torch.cat([xy, xy + wh], dim=1))
    return (anchors, pred_logits, labels, pred_deltas, gt_boxes)


def inputs():
    bg = [torch.full((8,), 3), torch.tensor([3, 3, -1, 3, 3, 3, -1, 3])]
    all_pos = [torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]), torch.tensor([2, 2, 1, 1, 0, 0, 1, 2])]
    return [
        _case(0),
        _case(1),
        _case(2, labels=bg),            # no positive anchor: max(0, 1)
        _case(3, labels=all_pos),
        _case(4, n=1, sizes=(4,)),
        _case(5, n=3, sizes=(2, 2, 2)),
        _case(6, labels=[torch.full((8,), -1), torch.full((8,), -1)]),   # everything ignored
        _case(7, n=1, sizes=(6, 1)),
    ]


def failing_inputs():
    bad = _case(8)
    bad[0][0][1] = torch.tensor([2.0, 2.0, 1.0, 5.0])   # anchor with negative width
    return [bad]
