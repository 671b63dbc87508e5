"""torchvision RandomErasing: rejection-sampled erase box from ``torch.empty(1).uniform_().item()`` draws.

``RandomErasing.get_params`` and ``forward`` kept as in the source (10 attempts; area and
log-aspect-ratio drawn with ``.item()``, ``int(round(math.sqrt(...)))`` box sizes, the
``if not (h < img_h and w < img_w): continue`` rejection, ``torch.randint(...).item()`` offsets,
``F.erase``), applied to a batch of images after GaussianNoise (torchvision.transforms.v2) and before a small
conv stem, as a training transform pipeline would.

Source: https://github.com/pytorch/vision/blob/main/torchvision/transforms/transforms.py (RandomErasing)
        https://github.com/pytorch/vision/blob/main/torchvision/transforms/_functional_tensor.py (erase)
        https://github.com/pytorch/vision/blob/main/torchvision/transforms/v2/functional/_misc.py (gaussian_noise)

Breaks: ``torch.rand(1) < self.p`` (data-dependent branch), the ``.item()`` reads of the random draws,
and the Python ints derived from them that size the erased region and the noise tensor.

HAND: none — the erased box's height and width (and the shape of the random fill ``v``) are
data-dependent sizes drawn from torch's generator; moving the rejection loop onto tensors would
change the sequence of random draws.
"""
import math
import numbers
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor


def erase(img: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False) -> Tensor:
    if not inplace:
        img = img.clone()

    img[..., i : i + h, j : j + w] = v
    return img


class RandomErasing(nn.Module):
    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, (tuple, list)):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, (tuple, list)):
            raise TypeError("Ratio should be a sequence")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")

        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    @staticmethod
    def get_params(
        img: Tensor, scale: Tuple[float, float], ratio: Tuple[float, float], value: Optional[List[float]] = None
    ) -> Tuple[int, int, int, int, Tensor]:
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w

        log_ratio = torch.log(torch.tensor(ratio))
        for _ in range(10):
            erase_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()

            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue

            if value is None:
                v = torch.empty([img_c, h, w], dtype=torch.float32).normal_()
            else:
                v = torch.tensor(value)[:, None, None]

            i = torch.randint(0, img_h - h + 1, size=(1,)).item()
            j = torch.randint(0, img_w - w + 1, size=(1,)).item()
            return i, j, h, w, v

        # Return original image
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if torch.rand(1) < self.p:

            # cast self.value to script acceptable type
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            elif isinstance(self.value, tuple):
                value = list(self.value)
            else:
                value = self.value

            if value is not None and not (len(value) in (1, img.shape[-3])):
                raise ValueError(
                    "If value is a sequence, it should have either a single value or "
                    f"{img.shape[-3]} (number of input channels)"
                )

            x, y, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
            return erase(img, x, y, h, w, v, self.inplace)
        return img


def gaussian_noise(image: Tensor, mean: float = 0.0, sigma: float = 0.1, clip: bool = True) -> Tensor:
    # torchvision.transforms.v2.functional.gaussian_noise
    noise = mean + torch.randn_like(image) * sigma
    out = image + noise
    if clip:
        out = torch.clamp(out, 0, 1)
    return out


class ErasedStem(nn.Module):
    def __init__(self, value="random"):
        super().__init__()
        self.erasing = RandomErasing(p=0.7, scale=(0.05, 0.4), value=value)
        self.stem = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, img):
        img = gaussian_noise(img)
        img = self.erasing(img)
        return self.stem(img), img


def make():
    torch.manual_seed(0)
    return ErasedStem()


def inputs():
    g = torch.Generator().manual_seed(0)
    return [
        (torch.rand(2, 3, 8, 8, generator=g),),
        (torch.rand(1, 3, 6, 10, generator=g),),
        (torch.rand(3, 3, 12, 12, generator=g),),
        (torch.rand(1, 3, 4, 4, generator=g),),
        (torch.rand(2, 3, 16, 9, generator=g),),
        (torch.rand(1, 3, 7, 7, generator=g),),
        (torch.rand(4, 3, 5, 11, generator=g),),
        (torch.rand(1, 3, 3, 3, generator=g),),
    ]


KIND = "item-random"
