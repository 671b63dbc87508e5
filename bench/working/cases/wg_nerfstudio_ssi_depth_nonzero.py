"""nerfstudio's monocular-depth `ScaleAndShiftInvariantLoss` (MiDaS loss): a per-image least-squares
scale and shift aligns the predicted depth to the target (`normalized_depth_scale_and_shift`, solved
only for images whose 2x2 system has `det != 0`), then the MiDaS MSE data term plus the multi-scale
gradient-matching term, both reduced per image over the valid pixels (`masked_reduction`, "image").

Source: https://github.com/nerfstudio-project/nerfstudio/blob/main/nerfstudio/model_components/losses.py
(`masked_reduction`, `normalized_depth_scale_and_shift`, `MiDaSMSELoss`, `GradientLoss`,
`ScaleAndShiftInvariantLoss`), itself after MiDaS
(https://gist.github.com/dvdhfnr/732c26b61a0e63a0abc8a5d769dbebd0). Run with reduction_type="image"
(the option whose reduction uses `nonzero`); alpha 0.5, 4 scales; batch 1-3 of 8x8 depth maps, bool
masks (some images with no or a single valid pixel, where det == 0).

Breaks: `valid = det.nonzero()` in `normalized_depth_scale_and_shift` and `valid = mask.nonzero()`
in `masked_reduction` (data-dependent output shape; the indexed assignments follow).

HAND: both become `torch.where` selections over the full batch with a safe denominator
(`torch.where(det != 0, det, 1)`, `torch.where(mask != 0, mask, 1)`): the solved entries get the same
values and gradients, the others keep 0 (scale/shift) or the unreduced image loss, as the indexed
assignments leave them.
"""
from typing import Literal

import torch
from torch import Tensor, nn

KIND = "nonzero-index"
GRAD = True

MSELoss = nn.MSELoss


def masked_reduction(input_tensor, mask, reduction_type: Literal["image", "batch"]):
    """
    Whether to consolidate the input_tensor across the batch or across the image
    """
    if reduction_type == "batch":
        # avoid division by 0 (if sum(M) = sum(sum(mask)) = 0: sum(image_loss) = 0)
        divisor = torch.sum(mask)
        if divisor == 0:
            return torch.tensor(0, device=input_tensor.device)
        input_tensor = torch.sum(input_tensor) / divisor
    elif reduction_type == "image":
        # avoid division by 0 (if M = sum(mask) = 0: image_loss = 0)
        valid = mask.nonzero()

        input_tensor[valid] = input_tensor[valid] / mask[valid]
        input_tensor = torch.mean(input_tensor)
    return input_tensor


def normalized_depth_scale_and_shift(prediction, target, mask):
    """
    Solves for scale/shift using a least squares approach with a closed form solution
    """
    # system matrix: A = [[a_00, a_01], [a_10, a_11]]
    a_00 = torch.sum(mask * prediction * prediction, (1, 2))
    a_01 = torch.sum(mask * prediction, (1, 2))
    a_11 = torch.sum(mask, (1, 2))

    # right hand side: b = [b_0, b_1]
    b_0 = torch.sum(mask * prediction * target, (1, 2))
    b_1 = torch.sum(mask * target, (1, 2))

    # solution: x = A^-1 . b = [[a_11, -a_01], [-a_10, a_00]] / (a_00 * a_11 - a_01 * a_10) . b
    scale = torch.zeros_like(b_0)
    shift = torch.zeros_like(b_1)

    det = a_00 * a_11 - a_01 * a_01
    valid = det.nonzero()

    scale[valid] = (a_11[valid] * b_0[valid] - a_01[valid] * b_1[valid]) / det[valid]
    shift[valid] = (-a_01[valid] * b_0[valid] + a_00[valid] * b_1[valid]) / det[valid]

    return scale, shift


class MiDaSMSELoss(nn.Module):
    """
    data term from MiDaS paper
    """

    def __init__(self, reduction_type: Literal["image", "batch"] = "batch"):
        super().__init__()

        self.reduction_type: Literal["image", "batch"] = reduction_type
        # reduction here is different from the image/batch-based reduction. This is either "mean" or "sum"
        self.mse_loss = MSELoss(reduction="none")

    def forward(self, prediction, target, mask):
        summed_mask = torch.sum(mask, (1, 2))
        image_loss = torch.sum(self.mse_loss(prediction, target) * mask, (1, 2))
        # multiply by 2 magic number?
        image_loss = masked_reduction(image_loss, 2 * summed_mask, self.reduction_type)

        return image_loss


class GradientLoss(nn.Module):
    """
    multiscale, scale-invariant gradient matching term to the disparity space.
    """

    def __init__(self, scales: int = 4, reduction_type: Literal["image", "batch"] = "batch"):
        super().__init__()
        self.reduction_type: Literal["image", "batch"] = reduction_type
        self.__scales = scales

    def forward(self, prediction, target, mask):
        assert self.__scales >= 1
        total = 0.0

        for scale in range(self.__scales):
            step = pow(2, scale)

            grad_loss = self.gradient_loss(
                prediction[:, ::step, ::step],
                target[:, ::step, ::step],
                mask[:, ::step, ::step],
            )
            total += grad_loss

        assert isinstance(total, Tensor)
        return total

    def gradient_loss(self, prediction, target, mask):
        summed_mask = torch.sum(mask, (1, 2))
        diff = prediction - target
        diff = torch.mul(mask, diff)

        grad_x = torch.abs(diff[:, :, 1:] - diff[:, :, :-1])
        mask_x = torch.mul(mask[:, :, 1:], mask[:, :, :-1])
        grad_x = torch.mul(mask_x, grad_x)

        grad_y = torch.abs(diff[:, 1:, :] - diff[:, :-1, :])
        mask_y = torch.mul(mask[:, 1:, :], mask[:, :-1, :])
        grad_y = torch.mul(mask_y, grad_y)

        image_loss = torch.sum(grad_x, (1, 2)) + torch.sum(grad_y, (1, 2))
        image_loss = masked_reduction(image_loss, summed_mask, self.reduction_type)

        return image_loss


class ScaleAndShiftInvariantLoss(nn.Module):
    """
    Scale and shift invariant loss as described in
    "Towards Robust Monocular Depth Estimation: Mixing Datasets for Zero-shot Cross-dataset Transfer"
    https://arxiv.org/pdf/1907.01341.pdf
    """

    def __init__(self, alpha: float = 0.5, scales: int = 4, reduction_type: Literal["image", "batch"] = "batch"):
        super().__init__()
        self.__data_loss = MiDaSMSELoss(reduction_type=reduction_type)
        self.__regularization_loss = GradientLoss(scales=scales, reduction_type=reduction_type)
        self.__alpha = alpha

        self.__prediction_ssi = None

    def forward(self, prediction, target, mask):
        scale, shift = normalized_depth_scale_and_shift(prediction, target, mask)
        self.__prediction_ssi = scale.view(-1, 1, 1) * prediction + shift.view(-1, 1, 1)

        total = self.__data_loss(self.__prediction_ssi, target, mask)
        if self.__alpha > 0:
            total += self.__alpha * self.__regularization_loss(self.__prediction_ssi, target, mask)

        return total


def make():
    return ScaleAndShiftInvariantLoss(alpha=0.5, scales=4, reduction_type="image")


def _case(g, b, keep=0.7, empty=(), single=()):
    target = torch.rand(b, 8, 8, generator=g) + 0.5
    prediction = 2.0 * target + 0.3 + 0.2 * torch.randn(b, 8, 8, generator=g)
    mask = torch.rand(b, 8, 8, generator=g) < keep
    for i in empty:  # no valid pixel: det == 0 and summed mask == 0
        mask[i] = False
    for i in single:  # one valid pixel: det == 0, summed mask == 1
        mask[i] = False
        mask[i, 3, 5] = True
    return (prediction, target, mask)


def inputs():
    g = torch.Generator().manual_seed(21)
    return [
        _case(g, 2),
        _case(g, 3, empty=(1,)),
        _case(g, 1, keep=1.0),
        _case(g, 2, single=(0,)),
        _case(g, 3, keep=0.3, empty=(0,), single=(2,)),
        _case(g, 1, keep=0.5),
        _case(g, 2, keep=0.9),
        _case(g, 2, empty=(0, 1)),      # nothing valid anywhere: loss 0
    ]
