"""torchvision's GeneralizedRCNN training-time target checks: shape checks with `torch._assert` on
Python booleans, then the degenerate-box check that looks at the box values and, for a bad box,
formats it with `.tolist()` into a `torch._assert(False, ...)` message; a small backbone and box
regression loss follow.

Source: https://github.com/pytorch/vision/blob/main/torchvision/models/detection/generalized_rcnn.py
(`GeneralizedRCNN.forward`), with the data-dependent-assert report
https://github.com/pytorch/pytorch/issues/96529 ("DataDependentOutputException:
aten._local_scalar_dense.default when using assert": the reporter's `assert torch.sum(y) > 0`
rewritten as `torch._assert` graph-breaks). Reduced: no transform, RPN or ROI heads; one conv
backbone and a per-image box regression loss.

Breaks: `if degenerate_boxes.any():` (data-dependent branch; dynamo then skips the frame, so the
`torch.where(...)[0][0]` / `.tolist()` / `torch._assert(False, ...)` of the error path run eagerly).

HAND: the degenerate-box check moves into a `torch.library.custom_op` with an ORDERED effect that
receives the boxes and the target index and raises the same AssertionError (same message, with the
first degenerate box formatted from `.tolist()`) at run time.
"""
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "branch-assert"
GRAD = True


class TinyRCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 4, 3, padding=1)
        self.box_head = nn.Linear(4, 4)

    def forward(self, images, targets=None):
        if self.training:
            if targets is None:
                torch._assert(False, "targets should not be none when in training mode")
            else:
                for target in targets:
                    boxes = target["boxes"]
                    if isinstance(boxes, torch.Tensor):
                        torch._assert(
                            len(boxes.shape) == 2 and boxes.shape[-1] == 4,
                            f"Expected target boxes to be a tensor of shape [N, 4], got {boxes.shape}.",
                        )
                    else:
                        torch._assert(False, f"Expected target boxes to be of type Tensor, got {type(boxes)}.")

        # Check for degenerate boxes
        if targets is not None:
            for target_idx, target in enumerate(targets):
                boxes = target["boxes"]
                degenerate_boxes = boxes[:, 2:] <= boxes[:, :2]
                if degenerate_boxes.any():
                    # print the first degenerate box
                    bb_idx = torch.where(degenerate_boxes.any(dim=1))[0][0]
                    degen_bb: List[float] = boxes[bb_idx].tolist()
                    torch._assert(
                        False,
                        "All bounding boxes should have positive height and width."
                        f" Found invalid box {degen_bb} for target at index {target_idx}.",
                    )

        features = torch.relu(self.backbone(images)).mean(dim=(2, 3))
        pred = self.box_head(features)
        losses = {}
        loss_box = pred.new_zeros(())
        for i, target in enumerate(targets):
            boxes = target["boxes"]
            loss_box = loss_box + F.smooth_l1_loss(pred[i].expand_as(boxes), boxes, reduction="sum")
        losses["loss_box_reg"] = loss_box / len(targets)
        return losses


def make():
    torch.manual_seed(0)
    return TinyRCNN().train()


def _boxes(g, n):
    xy = torch.rand(n, 2, generator=g) * 4
    wh = torch.rand(n, 2, generator=g) * 3 + 0.1
    return torch.cat([xy, xy + wh], dim=1)


def inputs():
    g = torch.Generator().manual_seed(11)
    img = lambda b: torch.randn(b, 3, 6, 6, generator=g)
    return [
        (img(1), [{"boxes": _boxes(g, 2)}]),
        (img(2), [{"boxes": _boxes(g, 1)}, {"boxes": _boxes(g, 3)}]),
        (img(2), [{"boxes": _boxes(g, 4)}, {"boxes": _boxes(g, 2)}]),
        (img(1), [{"boxes": torch.tensor([[0.0, 0.0, 1.0, 1.0]])}]),
        (img(3), [{"boxes": _boxes(g, 1)}, {"boxes": _boxes(g, 1)}, {"boxes": _boxes(g, 2)}]),
        (img(1), [{"boxes": torch.tensor([[1.0, 2.0, 1.5, 2.01], [0.0, 0.0, 5.0, 5.0]])}]),
        (img(2), [{"boxes": _boxes(g, 5)}, {"boxes": _boxes(g, 5)}]),
        (img(1), [{"boxes": _boxes(g, 3) * 10}]),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(12)
    img = lambda b: torch.randn(b, 3, 6, 6, generator=g)
    return [
        (img(1), [{"boxes": torch.tensor([[0.0, 0.0, 1.0, 1.0], [2.0, 2.0, 2.0, 3.0]])}]),
        (img(2), [{"boxes": _boxes(g, 2)}, {"boxes": torch.tensor([[3.0, 1.0, 1.0, 2.5]])}]),
    ]
