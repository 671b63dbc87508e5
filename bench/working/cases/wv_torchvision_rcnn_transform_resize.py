"""torchvision GeneralizedRCNNTransform (the normalize / resize / batch front end of Faster,
Mask and Keypoint R-CNN, run at the start of every detection forward), in training mode.

Source: https://github.com/pytorch/vision/blob/01fdb48883a534c746b1c60683a6eb4d70e72db6/torchvision/models/detection/transform.py
(_resize_image_and_masks, GeneralizedRCNNTransform.forward / normalize / torch_choice / resize /
max_by_axis / batch_images, resize_boxes; kept as in the source, minus the ONNX-tracing branches
`torchvision._is_tracing()`, which are False outside ONNX export; ImageList from
torchvision/models/detection/image_list.py is reduced to a dataclass with the same two fields).
min_size=(16,), max_size=40 instead of (800,), 1333; images of 12-30 pixels.

Breaks: `torch_choice` draws the training scale with
`int(torch.empty(1).uniform_(0.0, float(len(k))).item())`, and _resize_image_and_masks computes
the resize factor as a 0-d tensor and calls `scale.item()` to pass it to interpolate as
`scale_factor` (Tensor.item() with capture_scalar_outputs=False; the output size depends on it).

HAND: the scale factor is computed in Python from the (static) image shape with the same float32
roundings as the tensor code (`self_min_size / min_size` is `min_size.reciprocal() * self_min_size`
for a tensor, so two float32 roundings, emulated with math.frexp/ldexp), and torch_choice, for the
one-element size list of this configuration, still draws the uniform number (same RNG stream) and
returns k[0] (a draw in [0, 1) always truncates to index 0). Multi-scale training (several
min_size values) is not rewritten: there the output shape depends on the random draw.
"""
import dataclasses
import math
from typing import Dict, List, Optional, Tuple

import torch
from torch import nn, Tensor

KIND = "Tensor.item() as interpolate scale"
GRAD = True


@dataclasses.dataclass
class ImageList:
    tensors: Tensor
    image_sizes: List[Tuple[int, int]]


def _resize_image_and_masks(
    image: Tensor,
    self_min_size: float,
    self_max_size: float,
    target: Optional[Dict[str, Tensor]] = None,
    fixed_size: Optional[Tuple[int, int]] = None,
) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
    im_shape = torch.tensor(image.shape[-2:])

    size: Optional[List[int]] = None
    scale_factor: Optional[float] = None
    recompute_scale_factor: Optional[bool] = None
    if fixed_size is not None:
        size = [fixed_size[1], fixed_size[0]]
    else:
        min_size = torch.min(im_shape).to(dtype=torch.float32)
        max_size = torch.max(im_shape).to(dtype=torch.float32)
        scale = torch.min(self_min_size / min_size, self_max_size / max_size)
        scale_factor = scale.item()
        recompute_scale_factor = True

    image = torch.nn.functional.interpolate(
        image[None],
        size=size,
        scale_factor=scale_factor,
        mode="bilinear",
        recompute_scale_factor=recompute_scale_factor,
        align_corners=False,
    )[0]

    if target is None:
        return image, target

    if "masks" in target:
        mask = target["masks"]
        mask = torch.nn.functional.interpolate(
            mask[:, None].float(), size=size, scale_factor=scale_factor, recompute_scale_factor=recompute_scale_factor
        )[:, 0].byte()
        target["masks"] = mask
    return image, target


def resize_boxes(boxes: Tensor, original_size: Tuple[int, int], new_size: Tuple[int, int]) -> Tensor:
    ratios = [
        torch.tensor(s, dtype=torch.float32, device=boxes.device)
        / torch.tensor(s_orig, dtype=torch.float32, device=boxes.device)
        for s, s_orig in zip(new_size, original_size)
    ]
    ratio_height, ratio_width = ratios
    xmin, ymin, xmax, ymax = boxes.unbind(1)

    xmin = xmin * ratio_width
    xmax = xmax * ratio_width
    ymin = ymin * ratio_height
    ymax = ymax * ratio_height
    return torch.stack((xmin, ymin, xmax, ymax), dim=1)


class GeneralizedRCNNTransform(nn.Module):
    def __init__(
        self,
        min_size: int,
        max_size: int,
        image_mean: List[float],
        image_std: List[float],
        size_divisible: int = 32,
        fixed_size: Optional[Tuple[int, int]] = None,
    ) -> None:

        super(GeneralizedRCNNTransform, self).__init__()
        if not isinstance(min_size, (list, tuple)):
            min_size = (min_size,)
        self.min_size = min_size
        self.max_size = max_size
        self.image_mean = image_mean
        self.image_std = image_std
        self.size_divisible = size_divisible
        self.fixed_size = fixed_size

    def forward(
        self, images: List[Tensor], targets: Optional[List[Dict[str, Tensor]]] = None
    ) -> Tuple[ImageList, Optional[List[Dict[str, Tensor]]]]:
        images = [img for img in images]
        if targets is not None:
            # make a copy of targets to avoid modifying it in-place
            targets_copy: List[Dict[str, Tensor]] = []
            for t in targets:
                data: Dict[str, Tensor] = {}
                for k, v in t.items():
                    data[k] = v
                targets_copy.append(data)
            targets = targets_copy
        for i in range(len(images)):
            image = images[i]
            target_index = targets[i] if targets is not None else None

            if image.dim() != 3:
                raise ValueError(
                    "images is expected to be a list of 3d tensors " "of shape [C, H, W], got {}".format(image.shape)
                )
            image = self.normalize(image)
            image, target_index = self.resize(image, target_index)
            images[i] = image
            if targets is not None and target_index is not None:
                targets[i] = target_index

        image_sizes = [img.shape[-2:] for img in images]
        batched_images = self.batch_images(images, size_divisible=self.size_divisible)
        image_sizes_list: List[Tuple[int, int]] = []
        for image_size in image_sizes:
            assert len(image_size) == 2
            image_sizes_list.append((image_size[0], image_size[1]))

        image_list = ImageList(batched_images, image_sizes_list)
        return image_list, targets

    def normalize(self, image: Tensor) -> Tensor:
        if not image.is_floating_point():
            raise TypeError(
                f"Expected input images to be of floating type (in range [0, 1]), "
                f"but found type {image.dtype} instead"
            )
        dtype, device = image.dtype, image.device
        mean = torch.as_tensor(self.image_mean, dtype=dtype, device=device)
        std = torch.as_tensor(self.image_std, dtype=dtype, device=device)
        return (image - mean[:, None, None]) / std[:, None, None]

    def torch_choice(self, k: List[int]) -> int:
        """
        Implements `random.choice` via torch ops so it can be compiled with
        TorchScript. Remove if https://github.com/pytorch/pytorch/issues/25803
        is fixed.
        """
        index = int(torch.empty(1).uniform_(0.0, float(len(k))).item())
        return k[index]

    def resize(
        self,
        image: Tensor,
        target: Optional[Dict[str, Tensor]] = None,
    ) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
        h, w = image.shape[-2:]
        if self.training:
            size = float(self.torch_choice(self.min_size))
        else:
            # FIXME assume for now that testing uses the largest scale
            size = float(self.min_size[-1])
        image, target = _resize_image_and_masks(image, size, float(self.max_size), target, self.fixed_size)

        if target is None:
            return image, target

        bbox = target["boxes"]
        bbox = resize_boxes(bbox, (h, w), tuple(image.shape[-2:]))
        target["boxes"] = bbox
        return image, target

    def max_by_axis(self, the_list: List[List[int]]) -> List[int]:
        maxes = the_list[0]
        for sublist in the_list[1:]:
            for index, item in enumerate(sublist):
                maxes[index] = max(maxes[index], item)
        return maxes

    def batch_images(self, images: List[Tensor], size_divisible: int = 32) -> Tensor:
        max_size = self.max_by_axis([list(img.shape) for img in images])
        stride = float(size_divisible)
        max_size = list(max_size)
        max_size[1] = int(math.ceil(float(max_size[1]) / stride) * stride)
        max_size[2] = int(math.ceil(float(max_size[2]) / stride) * stride)

        batch_shape = [len(images)] + max_size
        batched_imgs = images[0].new_full(batch_shape, 0)
        for i in range(batched_imgs.shape[0]):
            img = images[i]
            batched_imgs[i, : img.shape[0], : img.shape[1], : img.shape[2]].copy_(img)

        return batched_imgs


def make():
    torch.manual_seed(0)
    return GeneralizedRCNNTransform(16, 40, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225], size_divisible=8)


def _target(g, h, w, n, masks):
    x1 = torch.rand(n, generator=g) * (w / 2)
    y1 = torch.rand(n, generator=g) * (h / 2)
    x2 = x1 + 1 + torch.rand(n, generator=g) * (w / 2 - 1)
    y2 = y1 + 1 + torch.rand(n, generator=g) * (h / 2 - 1)
    t = {"boxes": torch.stack([x1, y1, x2, y2], 1), "labels": torch.randint(1, 5, (n,), generator=g)}
    if masks:
        t["masks"] = (torch.rand(n, h, w, generator=g) > 0.5).to(torch.uint8)
    return t


def inputs():
    g = torch.Generator().manual_seed(0)
    sizes = [
        [(20, 30)],
        [(25, 17), (12, 30)],
        [(21, 21), (30, 13), (16, 24)],
        [(13, 29)],
        [(27, 18), (19, 23)],
        [(15, 15)],
        [(24, 11), (11, 24)],
        [(29, 22)],
    ]
    out = []
    for i, ss in enumerate(sizes):
        images = [torch.rand(3, h, w, generator=g) for h, w in ss]
        if i in (3, 5):
            targets = None
        else:
            targets = [_target(g, h, w, 2 + j, masks=(i % 2 == 0)) for j, (h, w) in enumerate(ss)]
        out.append((images, targets))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    return [([torch.rand(20, 30, generator=g)], None)]
