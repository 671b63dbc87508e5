"""torchvision detection reference's RandomIoUCrop (the SSD zoom-in augmentation): draw a minimum
IoU option, then up to `trials` random crops, and keep the first crop whose boxes' centres fall
inside it with enough IoU; the boxes are cropped and clamped with it.

Source: https://github.com/pytorch/vision/blob/main/references/detection/transforms.py (RandomIoUCrop).
Reduced: `F.get_dimensions`, `F.crop` and `torchvision.ops.boxes.box_iou` are written inline with
torch ops (tensor images only).

Breaks: `idx = int(torch.randint(...))`, `new_w = int(orig_w * r[0])`, `left = int((orig_w - new_w)
* r[0])` (tensor to Python int), `if not is_within_crop_area.any(): continue` and
`if ious.max() < min_jaccard_overlap: continue` (branches on tensor values), and
`boxes = target["boxes"][is_within_crop_area]` (boolean-mask indexing, data-dependent shape).

HAND: none — the crop's height and width are drawn at run time and are the output image's shape,
and the boxes/labels kept are a data-dependent subset.
"""
from typing import Dict, List, Optional, Tuple

import torch
from torch import Tensor, nn


def get_dimensions(img: Tensor) -> List[int]:
    channels = 1 if img.ndim == 2 else img.shape[-3]
    height, width = img.shape[-2:]
    return [channels, height, width]


def crop(img: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    return img[..., top:top + height, left:left + width]


def box_area(boxes: Tensor) -> Tensor:
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])  # [N,M,2]
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])  # [N,M,2]
    wh = (rb - lt).clamp(min=0)  # [N,M,2]
    inter = wh[:, :, 0] * wh[:, :, 1]  # [N,M]
    union = area1[:, None] + area2 - inter
    return inter / union


class RandomIoUCrop(nn.Module):
    def __init__(
        self,
        min_scale: float = 0.3,
        max_scale: float = 1.0,
        min_aspect_ratio: float = 0.5,
        max_aspect_ratio: float = 2.0,
        sampler_options: Optional[List[float]] = None,
        trials: int = 40,
    ):
        super().__init__()
        # Configuration similar to https://github.com/weiliu89/caffe/blob/ssd/examples/ssd/ssd_coco.py#L89-L174
        self.min_scale = min_scale
        self.max_scale = max_scale
        self.min_aspect_ratio = min_aspect_ratio
        self.max_aspect_ratio = max_aspect_ratio
        if sampler_options is None:
            sampler_options = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
        self.options = sampler_options
        self.trials = trials

    def forward(
        self, image: Tensor, target: Optional[Dict[str, Tensor]] = None
    ) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
        if target is None:
            raise ValueError("The targets can't be None for this transform.")

        if isinstance(image, torch.Tensor):
            if image.ndimension() not in {2, 3}:
                raise ValueError(f"image should be 2/3 dimensional. Got {image.ndimension()} dimensions.")
            elif image.ndimension() == 2:
                image = image.unsqueeze(0)

        _, orig_h, orig_w = get_dimensions(image)

        while True:
            # sample an option
            idx = int(torch.randint(low=0, high=len(self.options), size=(1,)))
            min_jaccard_overlap = self.options[idx]
            if min_jaccard_overlap >= 1.0:  # a value larger than 1 encodes the leave as-is option
                return image, target

            for _ in range(self.trials):
                # check the aspect ratio limitations
                r = self.min_scale + (self.max_scale - self.min_scale) * torch.rand(2)
                new_w = int(orig_w * r[0])
                new_h = int(orig_h * r[1])
                aspect_ratio = new_w / new_h
                if not (self.min_aspect_ratio <= aspect_ratio <= self.max_aspect_ratio):
                    continue

                # check for 0 area crops
                r = torch.rand(2)
                left = int((orig_w - new_w) * r[0])
                top = int((orig_h - new_h) * r[1])
                right = left + new_w
                bottom = top + new_h
                if left == right or top == bottom:
                    continue

                # check for any valid boxes with centers within the crop area
                cx = 0.5 * (target["boxes"][:, 0] + target["boxes"][:, 2])
                cy = 0.5 * (target["boxes"][:, 1] + target["boxes"][:, 3])
                is_within_crop_area = (left < cx) & (cx < right) & (top < cy) & (cy < bottom)
                if not is_within_crop_area.any():
                    continue

                # check at least 1 box with jaccard limitations
                boxes = target["boxes"][is_within_crop_area]
                ious = box_iou(
                    boxes, torch.tensor([[left, top, right, bottom]], dtype=boxes.dtype, device=boxes.device)
                )
                if ious.max() < min_jaccard_overlap:
                    continue

                # keep only valid boxes and perform cropping
                target["boxes"] = boxes
                target["labels"] = target["labels"][is_within_crop_area]
                target["boxes"][:, 0::2] -= left
                target["boxes"][:, 1::2] -= top
                target["boxes"][:, 0::2].clamp_(min=0, max=new_w)
                target["boxes"][:, 1::2].clamp_(min=0, max=new_h)
                image = crop(image, top, left, new_h, new_w)

                return image, target


def make():
    # The default options without the trailing 1.0 ("leave as is"): every call starts from the same
    # RNG state, and its first draw would pick 1.0 and skip the crop search on every input.
    return RandomIoUCrop(sampler_options=[0.0, 0.1, 0.3, 0.5, 0.7, 0.9])


def _target(g, n, h, w, big=False):
    xy = torch.rand(n, 2, generator=g) * torch.tensor([w * 0.6, h * 0.6])
    wh = torch.rand(n, 2, generator=g) * torch.tensor([w * 0.4, h * 0.4]) + 2
    if big:
        xy = xy * 0.2
        wh = torch.tensor([w * 0.8, h * 0.8]).repeat(n, 1)
    boxes = torch.cat([xy, xy + wh], dim=1)
    return {"boxes": boxes, "labels": torch.randint(1, 5, (n,), generator=g)}


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for i, (h, w, n, big) in enumerate([(32, 32, 3, False), (24, 40, 1, False), (40, 24, 5, False),
                                        (32, 32, 2, True), (16, 16, 4, False), (48, 32, 6, False),
                                        (20, 30, 1, True), (32, 32, 8, False)]):
        img = torch.rand(3, h, w, generator=g) if i % 4 else torch.rand(h, w, generator=g)
        out.append((img, _target(g, n, h, w, big)))
    return out


def failing_inputs():
    return [(torch.rand(3, 8, 8), None), (torch.rand(1, 3, 8, 8), {"boxes": torch.zeros(0, 4)})]


KIND = "int+branch-loop"
