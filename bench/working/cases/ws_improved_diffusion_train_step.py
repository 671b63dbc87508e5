"""OpenAI improved-diffusion training step: `TrainLoop.forward_backward`'s loss path — timesteps from
`UniformSampler.sample` (NumPy importance sampling), `GaussianDiffusion.training_losses` (MSE on eps),
the weighted mean, and `log_loss_dict` (per-quartile logging with `.item()` and NumPy).

Sources: https://github.com/openai/improved-diffusion/blob/main/improved_diffusion/resample.py (ScheduleSampler.sample,
UniformSampler), https://github.com/openai/improved-diffusion/blob/main/improved_diffusion/train_util.py
(forward_backward, log_loss_dict), improved_diffusion/gaussian_diffusion.py (q_sample, training_losses,
_extract_into_tensor, mean_flat) and improved_diffusion/logger.py (logkv_mean). The UNet is reduced to a
conv with a timestep embedding; only the MSE / epsilon configuration is kept; backward is left out.

Breaks: `np.random.choice(len(p), size=(batch_size,), p=p)` (NumPy random in the traced function) and
`values.mean().item()` in `log_loss_dict` (the per-sample NumPy loop after it runs in the resumed frame).

HAND: none — the timesteps are drawn from NumPy's global random stream (a torch sampler draws a
different stream), and the logger receives Python floats computed from the batch.
"""
import math

import numpy as np
import torch as th
from torch import nn

KIND = "numpy random + .item() logging"
GRAD = True


class Logger:
    def __init__(self):
        self.name2val = {}
        self.name2cnt = {}

    def logkv_mean(self, key, val):
        oldval, cnt = self.name2val.get(key, 0.0), self.name2cnt.get(key, 0)
        self.name2val[key] = oldval * cnt / (cnt + 1) + val / (cnt + 1)
        self.name2cnt[key] = cnt + 1


def mean_flat(tensor):
    """Take the mean over all non-batch dimensions."""
    return tensor.mean(dim=list(range(1, len(tensor.shape))))


def _extract_into_tensor(arr, timesteps, broadcast_shape):
    res = th.from_numpy(arr).to(device=timesteps.device)[timesteps].float()
    while len(res.shape) < len(broadcast_shape):
        res = res[..., None]
    return res.expand(broadcast_shape)


class GaussianDiffusion:
    def __init__(self, betas, rescale_timesteps=True):
        self.rescale_timesteps = rescale_timesteps
        betas = np.array(betas, dtype=np.float64)
        self.num_timesteps = int(betas.shape[0])
        alphas = 1.0 - betas
        self.alphas_cumprod = np.cumprod(alphas, axis=0)
        self.sqrt_alphas_cumprod = np.sqrt(self.alphas_cumprod)
        self.sqrt_one_minus_alphas_cumprod = np.sqrt(1.0 - self.alphas_cumprod)

    def q_sample(self, x_start, t, noise=None):
        if noise is None:
            noise = th.randn_like(x_start)
        assert noise.shape == x_start.shape
        return (
            _extract_into_tensor(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start
            + _extract_into_tensor(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise
        )

    def _scale_timesteps(self, t):
        if self.rescale_timesteps:
            return t.float() * (1000.0 / self.num_timesteps)
        return t

    def training_losses(self, model, x_start, t, model_kwargs=None, noise=None):
        if model_kwargs is None:
            model_kwargs = {}
        if noise is None:
            noise = th.randn_like(x_start)
        x_t = self.q_sample(x_start, t, noise=noise)
        terms = {}
        model_output = model(x_t, self._scale_timesteps(t), **model_kwargs)
        target = noise
        assert model_output.shape == target.shape == x_start.shape
        terms["mse"] = mean_flat((target - model_output) ** 2)
        terms["loss"] = terms["mse"]
        return terms


class UniformSampler:
    def __init__(self, diffusion):
        self.diffusion = diffusion
        self._weights = np.ones([diffusion.num_timesteps])

    def weights(self):
        return self._weights

    def sample(self, batch_size, device):
        w = self.weights()
        p = w / np.sum(w)
        indices_np = np.random.choice(len(p), size=(batch_size,), p=p)
        indices = th.from_numpy(indices_np).long().to(device)
        weights_np = 1 / (len(p) * p[indices_np])
        weights = th.from_numpy(weights_np).float().to(device)
        return indices, weights


def timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = th.exp(-math.log(max_period) * th.arange(start=0, end=half, dtype=th.float32) / half).to(device=timesteps.device)
    args = timesteps[:, None].float() * freqs[None]
    return th.cat([th.cos(args), th.sin(args)], dim=-1)


class TinyUNet(nn.Module):
    def __init__(self, ch=3, hidden=8):
        super().__init__()
        self.hidden = hidden
        self.inp = nn.Conv2d(ch, hidden, 3, padding=1)
        self.emb = nn.Linear(hidden, hidden)
        self.out = nn.Conv2d(hidden, ch, 3, padding=1)

    def forward(self, x, timesteps):
        h = self.inp(x) + self.emb(timestep_embedding(timesteps, self.hidden))[:, :, None, None]
        return self.out(th.nn.functional.silu(h))


def log_loss_dict(logger, diffusion, ts, losses):
    for key, values in losses.items():
        logger.logkv_mean(key, values.mean().item())
        # Log the quantiles (four quartiles, in particular).
        for sub_t, sub_loss in zip(ts.cpu().numpy(), values.detach().cpu().numpy()):
            quartile = int(4 * sub_t / diffusion.num_timesteps)
            logger.logkv_mean(f"{key}_q{quartile}", sub_loss)


class TrainStep(nn.Module):
    def __init__(self, num_timesteps=20):
        super().__init__()
        self.model = TinyUNet()
        self.diffusion = GaussianDiffusion(np.linspace(1e-4, 0.02, num_timesteps))
        self.schedule_sampler = UniformSampler(self.diffusion)
        self.logger = Logger()

    def forward(self, micro):
        t, weights = self.schedule_sampler.sample(micro.shape[0], micro.device)
        losses = self.diffusion.training_losses(self.model, micro, t)
        loss = (losses["loss"] * weights).mean()
        log_loss_dict(self.logger, self.diffusion, t, {k: v * weights for k, v in losses.items()})
        return loss


def make():
    th.manual_seed(0)
    return TrainStep()


def inputs():
    th.manual_seed(0)
    return [(th.randn(b, 3, 4, 4),) for b in (4, 2, 1, 6, 3, 8, 5, 2)]
