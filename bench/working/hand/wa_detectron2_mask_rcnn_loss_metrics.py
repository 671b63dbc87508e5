"""Hand rewrite of cases/wa_detectron2_mask_rcnn_loss_metrics.py: the accuracy / false-positive /
false-negative metrics are computed (with the source's `.item()` arithmetic) and put into the
EventStorage by a `torch.library.custom_op` with an ORDERED effect, at run time inside the graph."""

import sys
from collections import defaultdict
from typing import List

import torch
from torch import Tensor
from torch._library.effects import EffectType
from torch.nn import functional as F

KIND = "item-logging"
GRAD = True


# -- detectron2/utils/events.py (reduced) ---------------------------------------------------------
_CURRENT_STORAGE_STACK = []


def get_event_storage():
    assert len(
        _CURRENT_STORAGE_STACK
    ), "get_event_storage() has to be called inside a 'with EventStorage(...)' context!"
    return _CURRENT_STORAGE_STACK[-1]


class EventStorage:
    def __init__(self, start_iter=0):
        self._history = defaultdict(list)
        self._latest_scalars = {}
        self._iter = start_iter
        self._current_prefix = ""

    def put_scalar(self, name, value, smoothing_hint=True, cur_iter=None):
        name = self._current_prefix + name
        cur_iter = self._iter if cur_iter is None else cur_iter
        history = self._history[name]
        value = float(value)
        history.append((value, cur_iter))
        self._latest_scalars[name] = (value, cur_iter)

    def __enter__(self):
        _CURRENT_STORAGE_STACK.append(self)
        return self


# -- detectron2/structures (reduced) --------------------------------------------------------------
class Boxes:
    def __init__(self, tensor):
        self.tensor = tensor

    def __eq__(self, other):
        return torch.equal(self.tensor, other.tensor)


class BitMasks:
    def __init__(self, tensor):
        self.tensor = tensor

    def __len__(self):
        return self.tensor.shape[0]

    def __eq__(self, other):
        return torch.equal(self.tensor, other.tensor)

    def crop_and_resize(self, boxes: torch.Tensor, mask_size: int) -> torch.Tensor:
        assert len(boxes) == len(self), "{} != {}".format(len(boxes), len(self))
        device = self.tensor.device
        bit_masks = self.tensor.to(dtype=torch.float32)
        boxes = boxes.to(device=device)
        # aligned ROIAlign, one bilinear sample per bin centre
        h, w = bit_masks.shape[-2:]
        steps = (torch.arange(mask_size, device=device, dtype=torch.float32) + 0.5) / mask_size
        xs = boxes[:, 0:1] + steps * (boxes[:, 2:3] - boxes[:, 0:1]) - 0.5
        ys = boxes[:, 1:2] + steps * (boxes[:, 3:4] - boxes[:, 1:2]) - 0.5
        grid = torch.stack(
            [
                ((2 * xs + 1) / w - 1)[:, None, :].expand(-1, mask_size, -1),
                ((2 * ys + 1) / h - 1)[:, :, None].expand(-1, -1, mask_size),
            ],
            dim=-1,
        )
        output = F.grid_sample(bit_masks[:, None], grid, align_corners=False).squeeze(1)
        output = output >= 0.5
        return output


class Instances:
    def __init__(self, image_size, gt_classes, gt_masks, proposal_boxes):
        self.image_size = image_size
        self.gt_classes = gt_classes
        self.gt_masks = gt_masks
        self.proposal_boxes = proposal_boxes

    def __len__(self):
        return self.gt_classes.shape[0]

    def __eq__(self, other):
        return (self.image_size == other.image_size and torch.equal(self.gt_classes, other.gt_classes)
                and self.gt_masks == other.gt_masks and self.proposal_boxes == other.proposal_boxes)


def cat(tensors: List[torch.Tensor], dim: int = 0):
    assert isinstance(tensors, (list, tuple))
    if len(tensors) == 1:
        return tensors[0]
    return torch.cat(tensors, dim)


# -- the metrics, at run time ----------------------------------------------------------------------
_NS, _NAME = "wa_d2", "put_mask_rcnn_metrics"
_MODULE = __name__
if not hasattr(getattr(torch.ops, _NS), _NAME):

    @torch.library.custom_op(f"{_NS}::{_NAME}", mutates_args=())
    def _put_mask_rcnn_metrics(pred_mask_logits: Tensor, gt_masks_bool: Tensor) -> None:
        # Log the training accuracy (using gt classes and sigmoid(0.0) == 0.5 threshold)
        mask_incorrect = (pred_mask_logits > 0.0) != gt_masks_bool
        mask_accuracy = 1 - (mask_incorrect.sum().item() / max(mask_incorrect.numel(), 1.0))
        num_positive = gt_masks_bool.sum().item()
        false_positive = (mask_incorrect & ~gt_masks_bool).sum().item() / max(
            gt_masks_bool.numel() - num_positive, 1.0
        )
        false_negative = (mask_incorrect & gt_masks_bool).sum().item() / max(num_positive, 1.0)

        # the op is registered once per process: take the storage of the module as imported now
        storage = sys.modules[_MODULE].get_event_storage()
        storage.put_scalar("mask_rcnn/accuracy", mask_accuracy)
        storage.put_scalar("mask_rcnn/false_positive", false_positive)
        storage.put_scalar("mask_rcnn/false_negative", false_negative)

    @_put_mask_rcnn_metrics.register_fake
    def _(pred_mask_logits, gt_masks_bool):
        return None

    _put_mask_rcnn_metrics.register_effect(EffectType.ORDERED)


# -- detectron2/modeling/roi_heads/mask_head.py ----------------------------------------------------
def mask_rcnn_loss(pred_mask_logits: torch.Tensor, instances: List[Instances], vis_period: int = 0):
    cls_agnostic_mask = pred_mask_logits.size(1) == 1
    total_num_masks = pred_mask_logits.size(0)
    mask_side_len = pred_mask_logits.size(2)
    assert pred_mask_logits.size(2) == pred_mask_logits.size(3), "Mask prediction must be square!"

    gt_classes = []
    gt_masks = []
    for instances_per_image in instances:
        if len(instances_per_image) == 0:
            continue
        if not cls_agnostic_mask:
            gt_classes_per_image = instances_per_image.gt_classes.to(dtype=torch.int64)
            gt_classes.append(gt_classes_per_image)

        gt_masks_per_image = instances_per_image.gt_masks.crop_and_resize(
            instances_per_image.proposal_boxes.tensor, mask_side_len
        ).to(device=pred_mask_logits.device)
        # A tensor of shape (N, M, M), N=#instances in the image; M=mask_side_len
        gt_masks.append(gt_masks_per_image)

    if len(gt_masks) == 0:
        return pred_mask_logits.sum() * 0

    gt_masks = cat(gt_masks, dim=0)

    if cls_agnostic_mask:
        pred_mask_logits = pred_mask_logits[:, 0]
    else:
        indices = torch.arange(total_num_masks)
        gt_classes = cat(gt_classes, dim=0)
        pred_mask_logits = pred_mask_logits[indices, gt_classes]

    if gt_masks.dtype == torch.bool:
        gt_masks_bool = gt_masks
    else:
        # Here we allow gt_masks to be float as well (depend on the implementation of rasterize())
        gt_masks_bool = gt_masks > 0.5
    gt_masks = gt_masks.to(dtype=torch.float32)

    # Log the training accuracy, false-positive and false-negative rates (at run time)
    getattr(getattr(torch.ops, _NS), _NAME)(pred_mask_logits.detach(), gt_masks_bool)

    mask_loss = F.binary_cross_entropy_with_logits(pred_mask_logits, gt_masks, reduction="mean")
    return mask_loss


EventStorage(start_iter=0).__enter__()


def make():
    return mask_rcnn_loss


def _image(g, n, num_classes, size=16, fill=None):
    """Ground truth of one image: n instances with bit masks and jittered proposal boxes."""
    gt_classes = torch.randint(0, num_classes, (n,), generator=g)
    if fill is None:
        masks = torch.zeros(n, size, size, dtype=torch.bool)
        for i in range(n):
            x0, y0 = torch.randint(0, size // 2, (2,), generator=g).tolist()
            x1, y1 = x0 + 4 + int(torch.randint(0, size // 2, (1,), generator=g)), y0 + 5
            masks[i, y0:y1, x0:x1] = True
    else:
        masks = torch.full((n, size, size), fill, dtype=torch.bool)
    xy = torch.rand(n, 2, generator=g) * size / 2
    wh = 3 + torch.rand(n, 2, generator=g) * size / 2
    boxes = torch.cat([xy, xy + wh], dim=1)
    return Instances((size, size), gt_classes, BitMasks(masks), Boxes(boxes))


def inputs():
    g = torch.Generator().manual_seed(7)
    M = 6
    logits = lambda r, c: torch.randn(r, c, M, M, generator=g) * 3
    imgs = lambda *ns, c=3, fill=None: [_image(g, n, c, fill=fill) for n in ns]

    inst = imgs(3, c=1)[0]
    target = inst.gt_masks.crop_and_resize(inst.proposal_boxes.tensor, M)
    perfect_logits = torch.where(target, 5.0, -5.0)[:, None]
    return [
        (logits(5, 3), imgs(2, 3)),                          # class-specific masks
        (logits(4, 1), imgs(1, 3, c=1)),                     # class-agnostic masks
        (logits(3, 4), imgs(0, 3, 0, c=4)),                  # images without instances
        (logits(0, 3), imgs(0, 0)),                          # no instance in the batch
        (logits(3, 2), imgs(3, c=2, fill=False)),            # no positive pixel
        (logits(2, 2), imgs(1, 1, c=2, fill=True)),          # only positive pixels
        (perfect_logits, [inst]),                            # a perfect prediction
        (torch.zeros(2, 3, M, M), imgs(2)),                  # logits exactly 0 (predicted negative)
        (logits(6, 5), imgs(1, 2, 3, c=5)),
    ]
