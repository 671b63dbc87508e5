"""AUTOMATIC1111 stable-diffusion-webui's NaN check after the UNet: `test_for_nans` reads
`torch.all(torch.isnan(x)).item()` and raises `NansException` with a long hint when the output is
all NaN; it runs inside the CFG denoiser's forward on every sampling step.

Source: https://github.com/AUTOMATIC1111/stable-diffusion-webui/blob/master/modules/devices.py
(`test_for_nans`, `NansException`) and
https://github.com/AUTOMATIC1111/stable-diffusion-webui/blob/master/modules/sd_samplers_cfg_denoiser.py
(`CFGDenoiser.forward` calls `devices.test_for_nans(x_out, "unet")`, then `combine_denoised`).
The UNet is a tiny conv; `shared.cmd_opts` is a namespace with the defaults.

Breaks: `torch.all(torch.isnan(x)).item()` (Tensor.item()).

HAND: the check moves into a `torch.library.custom_op` with an ORDERED effect that builds the same
message and raises the same `NansException` at run time.
"""
import types

import torch
from torch import nn

KIND = "item-raise"

shared = types.SimpleNamespace(cmd_opts=types.SimpleNamespace(disable_nan_check=False, no_half=False, no_half_vae=False))


class NansException(Exception):
    pass


def test_for_nans(x, where):
    if shared.cmd_opts.disable_nan_check:
        return

    if not torch.all(torch.isnan(x)).item():
        return

    if where == "unet":
        message = "A tensor with all NaNs was produced in Unet."

        if not shared.cmd_opts.no_half:
            message += " This could be either because there's not enough precision to represent the picture, or because your video card does not support half type. Try setting the \"Upcast cross attention layer to float32\" option in Settings > Stable Diffusion or using the --no-half commandline argument to fix this."

    elif where == "vae":
        message = "A tensor with all NaNs was produced in VAE."

        if not shared.cmd_opts.no_half and not shared.cmd_opts.no_half_vae:
            message += " This could be because there's not enough precision to represent the picture. Try adding --no-half-vae commandline argument to fix this."
    else:
        message = "A tensor with all NaNs was produced."

    message += " Use --disable-nan-check commandline argument to disable this check."

    raise NansException(message)


class InnerModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x, sigma, cond):
        return x - sigma[:, None, None, None] * torch.tanh(self.conv(x) + cond[:, :, None, None])


class CFGDenoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner_model = InnerModel()

    def combine_denoised(self, x_out, conds_list, uncond, cond_scale):
        denoised_uncond = x_out[-uncond.shape[0]:]
        denoised = torch.clone(denoised_uncond)

        for i, conds in enumerate(conds_list):
            for cond_index, weight in conds:
                denoised[i] += (x_out[cond_index] - denoised_uncond[i]) * (weight * cond_scale)

        return denoised

    def forward(self, x, sigma, uncond, cond, cond_scale):
        conds_list = [[(i, 1.0)] for i in range(x.shape[0])]
        x_in = torch.cat([x, x])
        sigma_in = torch.cat([sigma, sigma])
        cond_in = torch.cat([cond, uncond])
        x_out = self.inner_model(x_in, sigma_in, cond=cond_in)

        test_for_nans(x_out, "unet")

        denoised = self.combine_denoised(x_out, conds_list, uncond, cond_scale)
        return denoised


def make():
    torch.manual_seed(0)
    return CFGDenoiser()


def inputs():
    torch.manual_seed(0)
    out = []
    for b, scale in [(1, 7.0), (2, 7.5), (1, 1.0), (3, 5.0), (2, 12.0), (1, 0.0)]:
        out.append((torch.randn(b, 4, 4, 4), torch.rand(b) * 10, torch.randn(b, 4), torch.randn(b, 4), scale))
    x = torch.randn(2, 4, 4, 4)
    x[0, 0, 0, 0] = float("nan")            # some NaNs but not all: no exception
    out.append((x, torch.rand(2), torch.randn(2, 4), torch.randn(2, 4), 7.0))
    out.append((torch.randn(1, 4, 4, 4), torch.zeros(1), torch.randn(1, 4), torch.randn(1, 4), 3.0))
    return out


def failing_inputs():
    torch.manual_seed(1)
    x = torch.full((1, 4, 4, 4), float("nan"))
    return [(x, torch.ones(1), torch.randn(1, 4), torch.randn(1, 4), 7.0),
            (torch.randn(2, 4, 4, 4), torch.full((2,), float("nan")), torch.randn(2, 4), torch.randn(2, 4), 7.0)]
