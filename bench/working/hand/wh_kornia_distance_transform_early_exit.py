"""Hand rewrite of cases/wh_kornia_distance_transform_early_exit.py: the data-dependent early exit
`if not mask.any(): break` is dropped and all `n_iters` iterations run. After the first all-False
`mask`, `boundary` stays the same, so each later iteration recomputes the same all-False `mask`
and adds `(offset + cdt) * 0` to `out` (`cdt` is finite after `nan_to_num`): same values,
same dtype and shape, no graph break in the loop."""
import math

import torch
import torch.nn.functional as F

KIND = "branch-loop-exit"


def _compute_padding(kernel_size):
    """Compute padding tuple."""
    if len(kernel_size) < 2:
        raise AssertionError(kernel_size)
    computed = [k - 1 for k in kernel_size]
    out_padding = 2 * len(kernel_size) * [0]
    for i in range(len(kernel_size)):
        computed_tmp = computed[-(i + 1)]
        pad_front = computed_tmp // 2
        pad_rear = computed_tmp - pad_front
        out_padding[2 * i + 0] = pad_front
        out_padding[2 * i + 1] = pad_rear
    return out_padding


def filter2d(input, kernel, border_type="reflect", normalized=False, padding="same", behaviour="corr"):
    # prepare kernel
    b, c, h, w = input.shape
    tmp_kernel = kernel[:, None, ...].to(device=input.device, dtype=input.dtype)
    tmp_kernel = tmp_kernel.expand(-1, c, -1, -1)
    height, width = tmp_kernel.shape[-2:]
    # pad the input tensor
    padding_shape = _compute_padding([height, width])
    input = F.pad(input, padding_shape, mode=border_type)
    # kernel and input tensor reshape to align element-wise or batch-wise params
    tmp_kernel = tmp_kernel.reshape(-1, 1, height, width)
    input = input.view(-1, tmp_kernel.size(0), input.size(-2), input.size(-1))
    # convolve the tensor with the kernel.
    output = F.conv2d(input, tmp_kernel, groups=tmp_kernel.size(0), padding=0, stride=1)
    out = output.view(b, c, h, w)
    return out


def create_meshgrid(height, width, normalized_coordinates=True, device=None, dtype=None):
    xs = torch.linspace(0, width - 1, width, device=device, dtype=dtype)
    ys = torch.linspace(0, height - 1, height, device=device, dtype=dtype)
    if normalized_coordinates:
        xs = (xs / (width - 1) - 0.5) * 2
        ys = (ys / (height - 1) - 0.5) * 2
    base_grid = torch.stack(torch.meshgrid([xs, ys], indexing="ij"), dim=-1)  # WxHx2
    return base_grid.permute(1, 0, 2).unsqueeze(0)  # 1xHxWx2


def _distance_transform_2d_impl(image: torch.Tensor, kernel_size: int, h: float) -> torch.Tensor:
    device = image.device
    dtype = image.dtype
    k_half = kernel_size // 2

    n_iters = math.ceil(max(image.shape[2], image.shape[3]) / k_half)
    grid = create_meshgrid(kernel_size, kernel_size, False, device, dtype)
    grid = grid - k_half

    dist = torch.hypot(grid[0, ..., 0], grid[0, ..., 1])
    kernel = torch.exp(-dist / h).unsqueeze(0)

    out = torch.zeros_like(image)
    boundary = image.clone()
    signal_ones = torch.ones_like(boundary)

    for i in range(n_iters):
        cdt = filter2d(boundary, kernel, border_type="replicate")
        cdt = -h * torch.log(cdt)
        cdt = torch.nan_to_num(cdt, nan=0.0, posinf=0.0, neginf=0.0)

        mask = cdt > 0
        # no early exit: once `mask` is all False every later iteration is a no-op on `out`/`boundary`

        offset: int = i * k_half
        out = out + (offset + cdt) * mask.to(dtype=out.dtype)
        boundary = torch.where(mask, signal_ones, boundary)

    return out


def distance_transform(image: torch.Tensor, kernel_size: int = 3, h: float = 0.35) -> torch.Tensor:
    if not isinstance(image, torch.Tensor):
        raise TypeError(f"Not a Tensor type. Got: {type(image)}")
    if not image.is_floating_point():
        raise ValueError("image must be a floating point tensor")
    if image.ndim != 4:
        raise ValueError(f"Invalid image shape, we expect BxCxHxW. Got: {image.shape}")
    if not isinstance(kernel_size, int):
        raise TypeError("kernel_size must be an int")
    if not (kernel_size % 2 != 0 and kernel_size >= 3):
        raise ValueError("kernel_size must be an odd integer >= 3")
    if not h > 0:
        raise ValueError(f"h must be a positive float, got {h}")
    return _distance_transform_2d_impl(image, kernel_size, h)


def make():
    return distance_transform


def _img(b, hh, ww, points):
    x = torch.zeros(b, 1, hh, ww)
    for (bi, r, c) in points:
        x[bi, 0, r, c] = 1.0
    return x


def inputs():
    return [
        (_img(1, 5, 5, [(0, 2, 2)]), 3, 0.35),                      # centre seed: front reaches all early -> break
        (_img(1, 5, 5, [(0, 0, 0)]), 3, 0.35),                      # corner seed: needs ~all iterations
        (_img(1, 6, 4, [(0, 5, 3)]), 3, 0.35),                      # far corner, non-square
        (_img(2, 5, 6, [(0, 1, 1), (1, 4, 5)]), 3, 0.35),           # batch of two
        (torch.zeros(1, 1, 4, 4), 3, 0.35),                         # empty image: break on first iteration
        (torch.ones(1, 1, 4, 4), 3, 0.35),                          # all set: nothing to reach
        (_img(1, 7, 7, [(0, 3, 3)]), 5, 0.35),                      # wider kernel
        (_img(1, 6, 6, [(0, 0, 5), (0, 5, 0)]), 3, 0.5),            # two seeds, other h
        (_img(1, 7, 5, [(0, 0, 2)]), 5, 0.35),                      # wider kernel, edge seed
        (_img(1, 6, 6, [(0, 0, 0)]), 5, 0.35),                      # front still moving at the last iteration: no break
        (_img(2, 4, 6, [(0, 3, 0), (1, 0, 5)]), 5, 0.35),           # same, batch of two
    ]
