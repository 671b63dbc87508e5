"""Hand rewrite of cases/cf_diffusers_euler_step_index.py: the step index stays a 0-d tensor
(`argmax` of the unique match), sigmas are read with `index_select`, and `gamma` is chosen with
`torch.where`."""
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

        # the schedule's timesteps are distinct: argmax finds the one match `.nonzero().item()` read
        step_index = (self.timesteps == timestep).int().argmax().reshape(1)
        sigma = self.sigmas.index_select(0, step_index)[0]

        in_range = (s_tmin <= sigma) & (sigma <= s_tmax)
        gamma = torch.where(in_range, min(s_churn / (len(self.sigmas) - 1), 2**0.5 - 1), 0.0)

        device = model_output.device
        noise = torch.randn(model_output.shape, dtype=model_output.dtype, device=device, generator=generator)

        eps = noise * s_noise
        sigma_hat = sigma * (gamma + 1)

        # gamma == 0 gives sigma_hat == sigma, so the added term is exactly 0
        sample = sample + eps * (sigma_hat**2 - sigma**2) ** 0.5

        # 1. compute predicted original sample (x_0) from sigma-scaled predicted noise
        pred_original_sample = sample - sigma_hat * model_output

        # 2. Convert to an ODE derivative
        derivative = (sample - pred_original_sample) / sigma_hat

        dt = self.sigmas.index_select(0, step_index + 1)[0] - sigma_hat

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
