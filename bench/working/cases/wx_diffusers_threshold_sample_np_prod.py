"""diffusers DDIMScheduler.step (eta=0, epsilon prediction) with dynamic thresholding enabled
(`thresholding=True`, as used by DeepFloyd IF / Imagen-style pipelines) -> _threshold_sample.

Source: https://github.com/huggingface/diffusers/blob/main/src/diffusers/schedulers/scheduling_ddim.py
        (DDIMScheduler._threshold_sample, DDIMScheduler.step)
        https://github.com/huggingface/diffusers/blob/main/src/diffusers/configuration_utils.py (FrozenDict)
Breaks: `sample = sample.reshape(batch_size, channels * np.prod(remaining_dims))` in _threshold_sample:
        dynamo traces the NumPy call on the Python shape ints as a tensor computation, and reshape then
        needs its value (aten._local_scalar_dense, data-dependent) -> graph break.
HAND: `math.prod(remaining_dims)` (the same integer, computed in Python) instead of `np.prod`.
"""
import math
from collections import OrderedDict

import numpy as np
import torch
from torch import nn

KIND = "numpy on shape ints -> reshape"
GRAD = True


class FrozenDict(OrderedDict):
    # diffusers.configuration_utils.FrozenDict (reduced): the config keys are also set as attributes
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, value in self.items():
            setattr(self, key, value)
        self.__frozen = True


class DDIMScheduler(nn.Module):
    def __init__(self, num_train_timesteps=1000, beta_start=0.0001, beta_end=0.02, thresholding=True,
                 dynamic_thresholding_ratio=0.9, sample_max_value=1.5, clip_sample=True, clip_sample_range=1.0,
                 num_inference_steps=10):
        super().__init__()
        self.config = FrozenDict(num_train_timesteps=num_train_timesteps, thresholding=thresholding,
                             dynamic_thresholding_ratio=dynamic_thresholding_ratio, sample_max_value=sample_max_value,
                             clip_sample=clip_sample, clip_sample_range=clip_sample_range)
        self.betas = torch.linspace(beta_start, beta_end, num_train_timesteps, dtype=torch.float32)
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)
        self.final_alpha_cumprod = torch.tensor(1.0)
        self.num_inference_steps = num_inference_steps

    def _threshold_sample(self, sample: torch.Tensor) -> torch.Tensor:
        dtype = sample.dtype
        batch_size, channels, *remaining_dims = sample.shape

        if dtype not in (torch.float32, torch.float64):
            sample = sample.float()  # upcast for quantile calculation, and clamp not implemented for cpu half

        # Flatten sample for doing quantile calculation along each image
        sample = sample.reshape(batch_size, channels * np.prod(remaining_dims))

        abs_sample = sample.abs()  # "a certain percentile absolute pixel value"

        s = torch.quantile(abs_sample, self.config.dynamic_thresholding_ratio, dim=1)
        s = torch.clamp(
            s, min=1, max=self.config.sample_max_value
        )  # When clamped to min=1, equivalent to standard clipping to [-1, 1]
        s = s.unsqueeze(1)  # (batch_size, 1) to broadcast along dim=0
        sample = torch.clamp(sample, -s, s) / s  # "we threshold xt0 to the range [-s, s] and then divide by s"

        sample = sample.reshape(batch_size, channels, *remaining_dims)
        sample = sample.to(dtype)

        return sample

    def forward(self, model_output, timestep: int, sample):
        # 1. get previous step value (=t-1)
        prev_timestep = timestep - self.config.num_train_timesteps // self.num_inference_steps

        # 2. compute alphas, betas
        alpha_prod_t = self.alphas_cumprod[timestep]
        alpha_prod_t_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod

        beta_prod_t = 1 - alpha_prod_t

        # 3. compute predicted original sample from predicted noise ("epsilon")
        pred_original_sample = (sample - beta_prod_t ** (0.5) * model_output) / alpha_prod_t ** (0.5)
        pred_epsilon = model_output

        # 4. Clip or threshold "predicted x_0"
        if self.config.thresholding:
            pred_original_sample = self._threshold_sample(pred_original_sample)
        elif self.config.clip_sample:
            pred_original_sample = pred_original_sample.clamp(
                -self.config.clip_sample_range, self.config.clip_sample_range
            )

        # 5. eta = 0: std_dev_t = 0
        # 6. compute "direction pointing to x_t"
        pred_sample_direction = (1 - alpha_prod_t_prev) ** (0.5) * pred_epsilon

        # 7. compute x_t without "random noise"
        prev_sample = alpha_prod_t_prev ** (0.5) * pred_original_sample + pred_sample_direction
        return prev_sample, pred_original_sample


def make():
    torch.manual_seed(0)
    return DDIMScheduler()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    shapes = [(1, 3, 4, 4), (2, 3, 4, 4), (2, 1, 8), (1, 2, 3, 3, 2), (3, 3, 4, 4), (2, 4, 2, 2), (1, 3, 5, 5), (2, 2, 6)]
    for i, shp in enumerate(shapes):
        t = [999, 899, 499, 99, 50, 0, 700, 300][i]
        sample = torch.randn(*shp, generator=g) * (0.5 + i * 0.4)
        eps = torch.randn(*shp, generator=g)
        out.append((eps, t, sample))
    return out
