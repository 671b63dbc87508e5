"""diffusers' EulerDiscreteScheduler.step (v0.12): the step index is looked up from the timestep
tensor with `(self.timesteps == timestep).nonzero().item()`, and the churn test
`s_tmin <= sigma <= s_tmax` branches on the looked-up sigma.

Source: https://github.com/huggingface/diffusers/blob/v0.12.0/src/diffusers/schedulers/scheduling_euler_discrete.py
(`EulerDiscreteScheduler.set_timesteps`, `.step`; later versions cache `_step_index` but keep
`index_for_timestep(...).item()` and the same churn line). Scaled-linear betas, epsilon prediction,
a 20-step schedule over 1000 train steps; the scheduler's bound `step` is compiled.

Breaks: `.nonzero()` (dynamic output shape) and `.item()` on its result, and the chained comparison
`s_tmin <= sigma <= s_tmax` (data-dependent branching).

HAND: the index becomes a 0-d tensor, `(self.timesteps == timestep).int().argmax()` (the schedule
has distinct timesteps, so this is the unique match `.item()` read), sigmas are read with
`index_select`, `gamma` is chosen with `torch.where` (with gamma == 0 the churn noise term is exactly
zero; the noise is drawn in both cases, as in the source).
"""
import numpy as np
import torch

KIND = "item+branch"


class EulerDiscreteScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012):
        self.num_train_timesteps = num_train_timesteps
        # "scaled_linear" schedule, as in Stable Diffusion
        self.betas = torch.linspace(beta_start**0.5, beta_end**0.5, num_train_timesteps, dtype=torch.float32) ** 2
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)

        sigmas = np.array(((1 - self.alphas_cumprod) / self.alphas_cumprod) ** 0.5)
        sigmas = np.concatenate([sigmas[::-1], [0.0]]).astype(np.float32)
        self.sigmas = torch.from_numpy(sigmas)
        self.init_noise_sigma = self.sigmas.max()
        self.num_inference_steps = None
        timesteps = np.linspace(0, num_train_timesteps - 1, num_train_timesteps, dtype=float)[::-1].copy()
        self.timesteps = torch.from_numpy(timesteps)
        self.is_scale_input_called = False

    def set_timesteps(self, num_inference_steps, device=None):
        self.num_inference_steps = num_inference_steps

        timesteps = np.linspace(0, self.num_train_timesteps - 1, num_inference_steps, dtype=float)[::-1].copy()
        sigmas = np.array(((1 - self.alphas_cumprod) / self.alphas_cumprod) ** 0.5)
        sigmas = np.interp(timesteps, np.arange(0, len(sigmas)), sigmas)
        sigmas = np.concatenate([sigmas, [0.0]]).astype(np.float32)
        self.sigmas = torch.from_numpy(sigmas).to(device=device)
        self.timesteps = torch.from_numpy(timesteps).to(device=device)

    def step(self, model_output, timestep, sample, s_churn=0.0, s_tmin=0.0, s_tmax=float("inf"), s_noise=1.0, generator=None, return_dict=True):
        if isinstance(timestep, torch.Tensor):
            timestep = timestep.to(self.timesteps.device)

        step_index = (self.timesteps == timestep).nonzero().item()
        sigma = self.sigmas[step_index]

        gamma = min(s_churn / (len(self.sigmas) - 1), 2**0.5 - 1) if s_tmin <= sigma <= s_tmax else 0.0

        device = model_output.device
        noise = torch.randn(model_output.shape, dtype=model_output.dtype, device=device, generator=generator)

        eps = noise * s_noise
        sigma_hat = sigma * (gamma + 1)

        if gamma > 0:
            sample = sample + eps * (sigma_hat**2 - sigma**2) ** 0.5

        # 1. compute predicted original sample (x_0) from sigma-scaled predicted noise
        pred_original_sample = sample - sigma_hat * model_output

        # 2. Convert to an ODE derivative
        derivative = (sample - pred_original_sample) / sigma_hat

        dt = self.sigmas[step_index + 1] - sigma_hat

        prev_sample = sample + derivative * dt

        return (prev_sample, pred_original_sample)


def make():
    torch.manual_seed(0)
    scheduler = EulerDiscreteScheduler()
    scheduler.set_timesteps(20)
    return scheduler.step


def inputs():
    torch.manual_seed(0)
    scheduler = EulerDiscreteScheduler()
    scheduler.set_timesteps(20)
    ts = scheduler.timesteps
    inf = float("inf")
    out = []
    for i, churn, tmin, tmax in [(0, 0.0, 0.0, inf), (1, 40.0, 0.0, inf), (5, 40.0, 0.5, 2.0), (10, 40.0, 0.5, 2.0),
                                 (19, 0.0, 0.0, inf), (19, 80.0, 0.0, inf), (3, 10.0, 5.0, 100.0), (15, 20.0, 0.0, 0.05)]:
        out.append((torch.randn(1, 4, 4, 4), ts[i].clone(), torch.randn(1, 4, 4, 4) * 3, churn, tmin, tmax))
    return out
