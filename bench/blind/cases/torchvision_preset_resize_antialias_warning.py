"""torchvision's inference preset (`weights.transforms()`, ImageClassification) run on tensors in
front of the classifier: `F.resize` with the v0.15 default `antialias="warn"` issues the
"default value of the antialias parameter ... will change" UserWarning on every bilinear/bicubic
tensor resize, then center crop, dtype conversion and normalization.

Source: https://github.com/pytorch/vision/blob/v0.15.2/torchvision/transforms/functional.py
        (resize, _check_antialias, _compute_resized_output_size, center_crop, normalize,
        convert_image_dtype), https://github.com/pytorch/vision/blob/v0.15.2/torchvision/transforms/_presets.py
        (ImageClassification.forward) and _functional_tensor.py (resize, crop, pad).
        The warning is the one users report from functional.py:1603.
Reduced: tensor-only paths (no PIL), `_log_api_usage_once` left out, a two-layer classifier.

Breaks: `warnings.warn(...)` in `_check_antialias` (a skipped function inside the compiled
region; the warning depends only on Python values), and `if (std == 0).any(): raise ValueError(...)`
in `normalize` (a branch on a tensor built from the Python std list).

HAND: the warning moves into a `torch.library.custom_op` with an ORDERED effect (anchored to the
image tensor) that issues the same UserWarning text at run time, once per resize as before; the
std check moves into another ORDERED custom op (given the image too, so it is not constant-folded)
that raises the same ValueError.
"""
import warnings
from enum import Enum
from typing import List, Optional, Tuple, Union

import torch
from torch import Tensor, nn
from torch.nn.functional import interpolate, pad as torch_pad


class InterpolationMode(Enum):
    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"


def get_dimensions(img: Tensor) -> List[int]:
    channels = 1 if img.ndim == 2 else img.shape[-3]
    height, width = img.shape[-2:]
    return [channels, height, width]


def _compute_resized_output_size(image_size: Tuple[int, int], size: List[int], max_size: Optional[int] = None) -> List[int]:
    if len(size) == 1:  # specified size only for the smallest edge
        h, w = image_size
        short, long = (w, h) if w <= h else (h, w)
        requested_new_short = size if isinstance(size, int) else size[0]

        new_short, new_long = requested_new_short, int(requested_new_short * long / short)

        if max_size is not None:
            if max_size <= requested_new_short:
                raise ValueError(
                    f"max_size = {max_size} must be strictly greater than the requested "
                    f"size for the smaller edge size = {size}"
                )
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size

        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    else:  # specified both h and w
        new_w, new_h = size[1], size[0]
    return [new_h, new_w]


def _check_antialias(img: Tensor, antialias: Optional[Union[str, bool]], interpolation: InterpolationMode) -> Optional[bool]:
    if isinstance(antialias, str):  # it should be "warn", but we don't bother checking against that
        if isinstance(img, Tensor) and (
            interpolation == InterpolationMode.BILINEAR or interpolation == InterpolationMode.BICUBIC
        ):
            warnings.warn(
                "The default value of the antialias parameter of all the resizing transforms "
                "(Resize(), RandomResizedCrop(), etc.) "
                "will change from None to True in v0.17, "
                "in order to be consistent across the PIL and Tensor backends. "
                "To suppress this warning, directly pass "
                "antialias=True (recommended, future default), antialias=None (current default, "
                "which means False for Tensors and True for PIL), "
                "or antialias=False (only works on Tensors - PIL will still use antialiasing). "
                "This also applies if you are using the inference transforms from the models weights: "
                "update the call to weights.transforms(antialias=True)."
            )
        antialias = None
    return antialias


def _cast_squeeze_in(img: Tensor, req_dtypes: List[torch.dtype]):
    need_squeeze = False
    # make image NCHW
    if img.ndim < 4:
        img = img.unsqueeze(dim=0)
        need_squeeze = True

    out_dtype = img.dtype
    need_cast = False
    if out_dtype not in req_dtypes:
        need_cast = True
        req_dtype = req_dtypes[0]
        img = img.to(req_dtype)
    return img, need_cast, need_squeeze, out_dtype


def _cast_squeeze_out(img: Tensor, need_cast: bool, need_squeeze: bool, out_dtype: torch.dtype) -> Tensor:
    if need_squeeze:
        img = img.squeeze(dim=0)

    if need_cast:
        if out_dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
            # it is better to round before cast
            img = torch.round(img)
        img = img.to(out_dtype)

    return img


def _resize_tensor(img: Tensor, size: List[int], interpolation: str = "bilinear", antialias: Optional[bool] = None) -> Tensor:
    if antialias is None:
        antialias = False

    if antialias and interpolation not in ["bilinear", "bicubic"]:
        antialias = False

    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [torch.float32, torch.float64])

    # Define align_corners to avoid warnings
    align_corners = False if interpolation in ["bilinear", "bicubic"] else None

    img = interpolate(img, size=size, mode=interpolation, align_corners=align_corners, antialias=antialias)

    if interpolation == "bicubic" and out_dtype == torch.uint8:
        img = img.clamp(min=0, max=255)

    img = _cast_squeeze_out(img, need_cast=need_cast, need_squeeze=need_squeeze, out_dtype=out_dtype)

    return img


def resize(img: Tensor, size: List[int], interpolation: InterpolationMode = InterpolationMode.BILINEAR,
           max_size: Optional[int] = None, antialias: Optional[Union[str, bool]] = "warn") -> Tensor:
    if isinstance(size, (list, tuple)):
        if len(size) not in [1, 2]:
            raise ValueError(
                f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element tuple/list"
            )
        if max_size is not None and len(size) != 1:
            raise ValueError(
                "max_size should only be passed if size specifies the length of the smaller edge, "
                "i.e. size should be an int or a sequence of length 1 in torchscript mode."
            )

    _, image_height, image_width = get_dimensions(img)
    if isinstance(size, int):
        size = [size]
    output_size = _compute_resized_output_size((image_height, image_width), size, max_size)

    if [image_height, image_width] == output_size:
        return img

    antialias = _check_antialias(img, antialias, interpolation)

    return _resize_tensor(img, size=output_size, interpolation=interpolation.value, antialias=antialias)


def crop(img: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    _, h, w = get_dimensions(img)
    right = left + width
    bottom = top + height

    if left < 0 or top < 0 or right > w or bottom > h:
        padding_ltrb = [
            max(-left + min(0, right), 0),
            max(-top + min(0, bottom), 0),
            max(right - max(w, left), 0),
            max(bottom - max(h, top), 0),
        ]
        return torch_pad(img[..., max(top, 0) : bottom, max(left, 0) : right], padding_ltrb, value=0)
    return img[..., top:bottom, left:right]


def center_crop(img: Tensor, output_size: List[int]) -> Tensor:
    if isinstance(output_size, int):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])

    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = output_size

    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        img = torch_pad(img, padding_ltrb, value=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img

    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def convert_image_dtype(image: Tensor, dtype: torch.dtype = torch.float) -> Tensor:
    if image.dtype == dtype:
        return image

    if image.is_floating_point():
        raise NotImplementedError("float -> other dtypes is left out of this reduction")

    # int to float
    # TODO: replace with dtype.is_floating_point when torchscript supports it
    if torch.tensor(0, dtype=dtype).is_floating_point():
        image = image.to(dtype)
        return image / 255  # _max_value(torch.uint8)
    raise NotImplementedError("int -> int is left out of this reduction")


def normalize(tensor: Tensor, mean: List[float], std: List[float], inplace: bool = False) -> Tensor:
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")

    if tensor.ndim < 3:
        raise ValueError(
            f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = {tensor.size()}"
        )

    if not inplace:
        tensor = tensor.clone()

    dtype = tensor.dtype
    mean = torch.as_tensor(mean, dtype=dtype, device=tensor.device)
    std = torch.as_tensor(std, dtype=dtype, device=tensor.device)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)


class ImageClassification(nn.Module):
    def __init__(
        self,
        *,
        crop_size: int,
        resize_size: int = 256,
        mean: Tuple[float, ...] = (0.485, 0.456, 0.406),
        std: Tuple[float, ...] = (0.229, 0.224, 0.225),
        interpolation: InterpolationMode = InterpolationMode.BILINEAR,
        antialias: Optional[Union[str, bool]] = "warn",
    ) -> None:
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img: Tensor) -> Tensor:
        img = resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        img = center_crop(img, self.crop_size)
        img = convert_image_dtype(img, torch.float)
        img = normalize(img, mean=self.mean, std=self.std)
        return img


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.preprocess = ImageClassification(crop_size=8, resize_size=10)
        self.features = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 5)

    def forward(self, img):
        x = self.preprocess(img)
        x = torch.relu(self.features(x)).mean((-2, -1))
        return self.fc(x)


def make():
    torch.manual_seed(0)
    return Classifier()


def inputs():
    g = torch.Generator().manual_seed(0)

    def u8(*shape):
        return torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)

    return [
        (u8(3, 16, 16),),
        (u8(3, 12, 20),),        # landscape: short edge 12 -> 10
        (u8(3, 24, 14),),        # portrait
        (u8(2, 3, 16, 16),),     # a batch
        (u8(3, 10, 13),),        # short edge already 10: no resize, no warning
        (u8(3, 10, 10),),        # output size equals input size: no resize
        (u8(3, 6, 9),),          # upscale
        (u8(1, 3, 30, 11),),
    ]


KIND = "warnings"
