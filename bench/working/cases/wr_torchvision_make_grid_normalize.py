"""torchvision.utils.make_grid with normalize=True (image grid for logging/visualisation).

Source: https://github.com/pytorch/vision/blob/main/torchvision/utils.py (`make_grid`;
`_log_api_usage_once` dropped).

Breaks: `norm_ip(t, float(t.min()), float(t.max()))` reads the range of the batch (or of each
image, with scale_each=True) back to Python floats (Tensor.item()).

HAND: keep `t.min()` / `t.max()` as 0-d tensors: `img.clamp_(min=low, max=high)` accepts tensors,
and `max(high - low, 1e-5)` becomes `(high - low).clamp(min=1e-5)`.
"""
import math
from typing import List, Optional, Tuple, Union

import torch

KIND = "item"


@torch.no_grad()
def make_grid(
    tensor: Union[torch.Tensor, List[torch.Tensor]],
    nrow: int = 8,
    padding: int = 2,
    normalize: bool = False,
    value_range: Optional[Tuple[int, int]] = None,
    scale_each: bool = False,
    pad_value: float = 0.0,
) -> torch.Tensor:
    if not torch.is_tensor(tensor):
        if isinstance(tensor, list):
            for t in tensor:
                if not torch.is_tensor(t):
                    raise TypeError(f"tensor or list of tensors expected, got a list containing {type(t)}")
        else:
            raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")

    # if list of tensors, convert to a 4D mini-batch Tensor
    if isinstance(tensor, list):
        tensor = torch.stack(tensor, dim=0)

    if tensor.dim() == 2:  # single image H x W
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:  # single image
        if tensor.size(0) == 1:  # if single-channel, convert to 3-channel
            tensor = torch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)

    if tensor.dim() == 4 and tensor.size(1) == 1:  # single-channel images
        tensor = torch.cat((tensor, tensor, tensor), 1)

    if normalize is True:
        tensor = tensor.clone()  # avoid modifying tensor in-place
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")

        def norm_ip(img, low, high):
            img.clamp_(min=low, max=high)
            img.sub_(low).div_(max(high - low, 1e-5))

        def norm_range(t, value_range):
            if value_range is not None:
                norm_ip(t, value_range[0], value_range[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))

        if scale_each is True:
            for t in tensor:  # loop over mini-batch dimension
                norm_range(t, value_range)
        else:
            norm_range(tensor, value_range)

    if not isinstance(tensor, torch.Tensor):
        raise TypeError("tensor should be of type torch.Tensor")
    if tensor.size(0) == 1:
        return tensor.squeeze(0)

    # make the mini-batch of images into a grid
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    num_channels = tensor.size(1)
    grid = tensor.new_full((num_channels, height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(2, x * width + padding, width - padding).copy_(
                tensor[k]
            )
            k = k + 1
    return grid


def make():
    return make_grid


def inputs():
    torch.manual_seed(0)
    return [
        (torch.randn(5, 3, 4, 4), 3, 2, True),                       # normalize by the batch range
        (torch.randn(4, 1, 5, 5) * 3, 2, 1, True, None, True),       # per-image range, grey -> rgb
        (torch.rand(3, 6, 6), 8, 2, True),                           # one image: squeezed
        (torch.full((2, 3, 3, 3), 0.25), 2, 1, True),                # constant batch: 1e-5 floor
        (torch.randn(6, 3, 2, 3), 4, 0, True, (-1, 1)),              # fixed value range
        (torch.randn(3, 3, 4, 4), 2, 2, False),                      # no normalization
        ([torch.randn(3, 4, 4), torch.randn(3, 4, 4) + 2], 8, 2, True, None, False, 1.0),
        (torch.randn(4, 4), 8, 2, True),                             # single H x W image
        (torch.cat([torch.zeros(1, 3, 3, 3), torch.randn(2, 3, 3, 3)]), 3, 1, True, None, True, 0.5),
    ]


def failing_inputs():
    torch.manual_seed(0)
    return [
        ("not a tensor", 8),
        (torch.randn(2, 3, 4, 4), 2, 2, True, [0, 1]),               # value_range not a tuple
    ]
