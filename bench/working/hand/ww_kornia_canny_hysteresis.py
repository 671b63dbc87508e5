"""kornia.filters.canny: Canny edge detector whose hysteresis step iterates until the edge map
stops changing.

Source: https://github.com/kornia/kornia/blob/b4f5a78a13891c7ac4c1cd9695941380273e981d/kornia/filters/canny.py
        https://github.com/kornia/kornia/blob/b4f5a78a13891c7ac4c1cd9695941380273e981d/kornia/filters/kernels.py
        (get_canny_nms_kernel, get_hysteresis_kernel)
The canny() body is kept as in the source; the grayscale conversion, gaussian_blur2d and
spatial_gradient helpers are reduced to their default paths (fixed 0.299/0.587/0.114 weights,
a separable gaussian with reflect padding, an unnormalized 3x3 Sobel with replicate padding).

Breaks: the hysteresis loop `while ((edges_old - edges).abs() != 0).any():` is a Python while loop
whose condition is a data-dependent tensor (dynamo: "Data-dependent branching"); the number of
iterations depends on the image.

Hand rewrite of cases/ww_kornia_canny_hysteresis.py.

HAND: the hysteresis loop becomes torch._higher_order_ops.while_loop (torch.while_loop) carrying
(edges_old, edges, hysteresis_magnitude); the body is unchanged, and the first iteration always runs
in both versions because edges_old starts at -1 while edges is in {0, 0.5, 1}.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


def KORNIA_CHECK(condition, msg=None):
    if not condition:
        raise Exception(f"{condition} not true.\n{msg}")


def rgb_to_grayscale(image):
    rgb_weights = torch.tensor([0.299, 0.587, 0.114], device=image.device, dtype=image.dtype)
    r, g, b = image.unbind(dim=-3)
    w_r, w_g, w_b = rgb_weights.unbind()
    out = r * w_r
    out = torch.addcmul(out, g, w_g)
    out = torch.addcmul(out, b, w_b)
    return out.unsqueeze(-3)


def _gaussian_kernel1d(ksize, sigma, device, dtype):
    x = torch.arange(ksize, device=device, dtype=dtype) - ksize // 2
    gauss = torch.exp(-x.pow(2.0) / (2 * sigma**2))
    return gauss / gauss.sum()


def gaussian_blur2d(input, kernel_size, sigma):
    b, c, h, w = input.shape
    ky, kx = kernel_size
    kernel_x = _gaussian_kernel1d(kx, float(sigma[1]), input.device, input.dtype)
    kernel_y = _gaussian_kernel1d(ky, float(sigma[0]), input.device, input.dtype)
    out = F.pad(input, [kx // 2, kx // 2, ky // 2, ky // 2], mode="reflect")
    out = out.reshape(b * c, 1, out.shape[-2], out.shape[-1])
    out = F.conv2d(out, kernel_x.view(1, 1, 1, kx))
    out = F.conv2d(out, kernel_y.view(1, 1, ky, 1))
    return out.view(b, c, h, w)


def spatial_gradient(input, normalized=False):
    kernel_x = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]], device=input.device, dtype=input.dtype)
    kernel = torch.stack([kernel_x, kernel_x.transpose(0, 1)])
    if normalized:
        kernel = kernel / kernel.abs().sum(dim=(-2, -1), keepdim=True)
    b, c, h, w = input.shape
    tmp_kernel = kernel[:, None, ...]
    spatial_pad = [kernel.size(1) // 2, kernel.size(1) // 2, kernel.size(2) // 2, kernel.size(2) // 2]
    padded_inp = F.pad(input.reshape(b * c, 1, h, w), spatial_pad, "replicate")
    out = F.conv2d(padded_inp, tmp_kernel, groups=1, padding=0, stride=1)
    return out.reshape(b, c, 2, h, w)


def get_canny_nms_kernel(device=None, dtype=None):
    """Return 3x3 kernels for the Canny Non-maximal suppression."""
    return torch.tensor(
        [
            [[[0.0, 0.0, 0.0], [0.0, 1.0, -1.0], [0.0, 0.0, 0.0]]],
            [[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]],
            [[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]]],
            [[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]],
            [[[0.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]],
            [[[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]],
            [[[0.0, -1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]],
            [[[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]],
        ],
        device=device,
        dtype=dtype,
    )


def get_hysteresis_kernel(device=None, dtype=None):
    """Return the 3x3 kernels for the Canny hysteresis."""
    return torch.tensor(
        [
            [[[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]],
            [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]],
            [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]],
            [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]],
            [[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
            [[[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
            [[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
            [[[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
        ],
        device=device,
        dtype=dtype,
    )


def canny(
    input: torch.Tensor,
    low_threshold: float = 0.1,
    high_threshold: float = 0.2,
    kernel_size=(5, 5),
    sigma=(1, 1),
    hysteresis: bool = True,
    eps: float = 1e-6,
):
    KORNIA_CHECK(
        low_threshold <= high_threshold,
        "Invalid input thresholds. low_threshold should be smaller than the high_threshold. Got: "
        f"{low_threshold}>{high_threshold}",
    )
    KORNIA_CHECK(0 < low_threshold < 1, f"Invalid low threshold. Should be in range (0, 1). Got: {low_threshold}")
    KORNIA_CHECK(0 < high_threshold < 1, f"Invalid high threshold. Should be in range (0, 1). Got: {high_threshold}")

    device = input.device
    dtype = input.dtype

    # To Grayscale
    if input.shape[1] == 3:
        input = rgb_to_grayscale(input)

    # Gaussian filter
    blurred: torch.Tensor = gaussian_blur2d(input, kernel_size, sigma)

    # Compute the gradients
    gradients: torch.Tensor = spatial_gradient(blurred, normalized=False)

    # Unpack the edges
    gx: torch.Tensor = gradients[:, :, 0]
    gy: torch.Tensor = gradients[:, :, 1]

    # Compute gradient magnitude and angle
    magnitude: torch.Tensor = torch.sqrt(gx * gx + gy * gy + eps)
    angle: torch.Tensor = torch.atan2(gy, gx)

    # Radians to degrees and round to nearest 45 degree
    angle_45 = (angle * (4 / math.pi)).round()

    # Non-maximal suppression
    nms_kernels: torch.Tensor = get_canny_nms_kernel(device, dtype)
    nms_magnitude: torch.Tensor = F.conv2d(magnitude, nms_kernels, padding=nms_kernels.shape[-1] // 2)

    # Get the indices for both directions
    positive_idx: torch.Tensor = angle_45 % 8
    positive_idx = positive_idx.long()

    negative_idx: torch.Tensor = (angle_45 + 4) % 8
    negative_idx = negative_idx.long()

    # Apply the non-maximum suppression to the different directions
    channel_select_filtered_positive: torch.Tensor = torch.gather(nms_magnitude, 1, positive_idx)
    channel_select_filtered_negative: torch.Tensor = torch.gather(nms_magnitude, 1, negative_idx)

    channel_select_filtered: torch.Tensor = torch.stack(
        [channel_select_filtered_positive, channel_select_filtered_negative], 1
    )

    is_max: torch.Tensor = channel_select_filtered.min(dim=1)[0] > 0.0

    magnitude = magnitude * is_max

    # Threshold
    edges: torch.Tensor = F.threshold(magnitude, low_threshold, 0.0)

    low: torch.Tensor = magnitude > low_threshold
    high: torch.Tensor = magnitude > high_threshold

    edges = low * 0.5 + high * 0.5
    edges = edges.to(dtype)

    # Hysteresis
    if hysteresis:
        edges_old: torch.Tensor = -torch.ones(edges.shape, device=edges.device, dtype=dtype)
        hysteresis_kernels: torch.Tensor = get_hysteresis_kernel(device, dtype)

        def cond_fn(edges_old, edges, hysteresis_magnitude):
            return ((edges_old - edges).abs() != 0).any()

        def body_fn(edges_old, edges, hysteresis_magnitude):
            weak: torch.Tensor = (edges == 0.5).float()
            strong: torch.Tensor = (edges == 1).float()

            hysteresis_magnitude = F.conv2d(edges, hysteresis_kernels, padding=hysteresis_kernels.shape[-1] // 2)
            hysteresis_magnitude = (hysteresis_magnitude == 1).any(1, keepdim=True).to(dtype)
            hysteresis_magnitude = hysteresis_magnitude * weak + strong

            edges_old = edges.clone()
            edges = hysteresis_magnitude + (hysteresis_magnitude == 0) * weak * 0.5
            return edges_old, edges, hysteresis_magnitude

        # edges_old starts at -1 and edges is in {0, 0.5, 1}: the body runs at least once, as in
        # the Python loop, so the initial hysteresis_magnitude is never returned.
        _, _, hysteresis_magnitude = torch.while_loop(cond_fn, body_fn, (edges_old, edges, torch.zeros_like(edges)))

        edges = hysteresis_magnitude

    return magnitude, edges


class Canny(nn.Module):
    def __init__(self, low_threshold=0.1, high_threshold=0.2, kernel_size=(5, 5), sigma=(1, 1), hysteresis=True, eps=1e-6):
        super().__init__()
        self.kernel_size = kernel_size
        self.sigma = sigma
        self.low_threshold = low_threshold
        self.high_threshold = high_threshold
        self.hysteresis = hysteresis
        self.eps = eps

    def forward(self, input):
        return canny(input, self.low_threshold, self.high_threshold, self.kernel_size, self.sigma, self.hysteresis, self.eps)


KIND = "data-dependent while loop (hysteresis)"
GRAD = True


def make():
    torch.manual_seed(0)
    return canny


def _image(g, b, c, h, w, kind):
    if kind == "rand":
        return 0.3 * torch.rand(b, c, h, w, generator=g)
    if kind == "flat":
        return torch.full((b, c, h, w), 0.5)
    # piecewise-constant shapes: long, weak edge chains that hysteresis grows step by step
    img = torch.zeros(b, c, h, w)
    ys = torch.arange(h).view(h, 1).float()
    xs = torch.arange(w).view(1, w).float()
    for i in range(b):
        cx, cy = float(torch.randint(3, w - 3, (1,), generator=g)), float(torch.randint(3, h - 3, (1,), generator=g))
        r = float(torch.randint(3, 6, (1,), generator=g))
        disk = ((xs - cx) ** 2 + (ys - cy) ** 2 <= r * r).float()
        ramp = xs / w  # contrast falls off along x: strong edges on the right, weak on the left
        img[i] = (disk * (0.02 + 0.25 * ramp)).expand(c, h, w)
    return img + 0.002 * torch.rand(b, c, h, w, generator=g)


def inputs():
    g = torch.Generator().manual_seed(0)
    return [
        (_image(g, 1, 1, 16, 16, "shapes"),),
        (_image(g, 2, 1, 16, 20, "shapes"), 0.05, 0.3),
        (_image(g, 1, 3, 16, 16, "shapes"), 0.1, 0.2),
        (_image(g, 2, 1, 12, 12, "rand"),),
        (_image(g, 1, 3, 14, 18, "rand"), 0.2, 0.6),
        (_image(g, 1, 1, 16, 16, "flat"),),
        (_image(g, 2, 1, 16, 16, "shapes"), 0.02, 0.5, (3, 3), (0.8, 0.8)),
        (_image(g, 1, 1, 16, 16, "shapes"), 0.1, 0.2, (5, 5), (1, 1), False),
        (_image(g, 1, 1, 24, 24, "shapes"), 0.05, 0.4),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    return [(_image(g, 1, 1, 8, 8, "rand"), 0.5, 0.2)]
