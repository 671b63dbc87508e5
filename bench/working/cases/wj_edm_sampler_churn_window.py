"""EDM's stochastic Heun sampler (Karras et al. 2022, Algorithm 2) with its preconditioned
denoiser: at every step the noise level is raised temporarily by `gamma`, which is non-zero only
inside the "churn window" `S_min <= t_cur <= S_max`; `t_cur` is an element of the float64 tensor of
time steps, so the chained comparison is a data-dependent branch in every iteration.

Source: https://github.com/NVlabs/edm/blob/0a2ff34f0b80415ace7af7311074bd2255da0d1e/generate.py
(`edm_sampler`) and
https://github.com/NVlabs/edm/blob/0a2ff34f0b80415ace7af7311074bd2255da0d1e/training/networks.py
(`EDMPrecond.forward`, `round_sigma`). The U-Net under `EDMPrecond` is reduced to a two-conv
noise-conditioned network with a class embedding; `randn_like` is the default `torch.randn_like`
(generate.py passes a per-seed generator's). Tiny shapes: batch 1-3, 2x4x4 images, 3-6 steps; the
callable takes the latents, the one-hot class labels and the sampler settings.

Breaks: `gamma = min(S_churn / num_steps, np.sqrt(2) - 1) if S_min <= t_cur <= S_max else 0`
(data-dependent branching on a 0-d tensor), inside the sampling loop.

HAND: `gamma` becomes a float64 0-d tensor,
`((S_min <= t_cur) & (t_cur <= S_max)).to(torch.float64) * min(S_churn / num_steps, np.sqrt(2) - 1)`,
which is the same number in both outcomes (0 outside the window), so `t_hat`, the added noise (whose
`randn_like` draw happens in both outcomes, as before) and the samples are the same.
"""
import numpy as np
import torch
from torch import nn

KIND = "branch-loop"


class TinyDenoiser(nn.Module):
    """Stands in for EDM's SongUNet/DhariwalUNet: F(x, c_noise, class_labels)."""

    def __init__(self, img_channels, label_dim, hidden=8):
        super().__init__()
        self.conv_in = nn.Conv2d(img_channels, hidden, 3, padding=1)
        self.map_noise = nn.Linear(1, hidden)
        self.map_label = nn.Linear(label_dim, hidden, bias=False) if label_dim else None
        self.conv_out = nn.Conv2d(hidden, img_channels, 3, padding=1)

    def forward(self, x, noise_labels, class_labels):
        emb = self.map_noise(noise_labels.reshape(-1, 1))
        if self.map_label is not None:
            emb = emb + self.map_label(class_labels)
        h = torch.nn.functional.silu(self.conv_in(x) + emb[:, :, None, None])
        return self.conv_out(h)


class EDMPrecond(torch.nn.Module):
    def __init__(self,
        img_resolution,                     # Image resolution.
        img_channels,                       # Number of color channels.
        label_dim       = 0,                # Number of class labels, 0 = unconditional.
        use_fp16        = False,            # Execute the underlying model at FP16 precision?
        sigma_min       = 0,                # Minimum supported noise level.
        sigma_max       = float('inf'),     # Maximum supported noise level.
        sigma_data      = 0.5,              # Expected standard deviation of the training data.
    ):
        super().__init__()
        self.img_resolution = img_resolution
        self.img_channels = img_channels
        self.label_dim = label_dim
        self.use_fp16 = use_fp16
        self.sigma_min = sigma_min
        self.sigma_max = sigma_max
        self.sigma_data = sigma_data
        self.model = TinyDenoiser(img_channels, label_dim)

    def forward(self, x, sigma, class_labels=None, force_fp32=False, **model_kwargs):
        x = x.to(torch.float32)
        sigma = sigma.to(torch.float32).reshape(-1, 1, 1, 1)
        class_labels = None if self.label_dim == 0 else torch.zeros([1, self.label_dim], device=x.device) if class_labels is None else class_labels.to(torch.float32).reshape(-1, self.label_dim)
        dtype = torch.float16 if (self.use_fp16 and not force_fp32 and x.device.type == 'cuda') else torch.float32

        c_skip = self.sigma_data ** 2 / (sigma ** 2 + self.sigma_data ** 2)
        c_out = sigma * self.sigma_data / (sigma ** 2 + self.sigma_data ** 2).sqrt()
        c_in = 1 / (self.sigma_data ** 2 + sigma ** 2).sqrt()
        c_noise = sigma.log() / 4

        F_x = self.model((c_in * x).to(dtype), c_noise.flatten(), class_labels=class_labels, **model_kwargs)
        assert F_x.dtype == dtype
        D_x = c_skip * x + c_out * F_x.to(torch.float32)
        return D_x

    def round_sigma(self, sigma):
        return torch.as_tensor(sigma)


#----------------------------------------------------------------------------
# Proposed EDM sampler (Algorithm 2).

def edm_sampler(
    net, latents, class_labels=None, randn_like=torch.randn_like,
    num_steps=18, sigma_min=0.002, sigma_max=80, rho=7,
    S_churn=0, S_min=0, S_max=float('inf'), S_noise=1,
):
    # Adjust noise levels based on what's supported by the network.
    sigma_min = max(sigma_min, net.sigma_min)
    sigma_max = min(sigma_max, net.sigma_max)

    # Time step discretization.
    step_indices = torch.arange(num_steps, dtype=torch.float64, device=latents.device)
    t_steps = (sigma_max ** (1 / rho) + step_indices / (num_steps - 1) * (sigma_min ** (1 / rho) - sigma_max ** (1 / rho))) ** rho
    t_steps = torch.cat([net.round_sigma(t_steps), torch.zeros_like(t_steps[:1])]) # t_N = 0

    # Main sampling loop.
    x_next = latents.to(torch.float64) * t_steps[0]
    for i, (t_cur, t_next) in enumerate(zip(t_steps[:-1], t_steps[1:])): # 0, ..., N-1
        x_cur = x_next

        # Increase noise temporarily.
        gamma = min(S_churn / num_steps, np.sqrt(2) - 1) if S_min <= t_cur <= S_max else 0
        t_hat = net.round_sigma(t_cur + gamma * t_cur)
        x_hat = x_cur + (t_hat ** 2 - t_cur ** 2).sqrt() * S_noise * randn_like(x_cur)

        # Euler step.
        denoised = net(x_hat, t_hat, class_labels).to(torch.float64)
        d_cur = (x_hat - denoised) / t_hat
        x_next = x_hat + (t_next - t_hat) * d_cur

        # Apply 2nd order correction.
        if i < num_steps - 1:
            denoised = net(x_next, t_next, class_labels).to(torch.float64)
            d_prime = (x_next - denoised) / t_next
            x_next = x_hat + (t_next - t_hat) * (0.5 * d_cur + 0.5 * d_prime)

    return x_next


def make():
    torch.manual_seed(0)
    net = EDMPrecond(img_resolution=4, img_channels=2, label_dim=3).eval()

    def sample(latents, class_labels, num_steps, S_churn, S_min, S_max, S_noise):
        with torch.no_grad():
            return edm_sampler(net, latents, class_labels, num_steps=num_steps,
                               S_churn=S_churn, S_min=S_min, S_max=S_max, S_noise=S_noise)

    return sample


def inputs():
    g = torch.Generator().manual_seed(9)

    def latents(b):
        return torch.randn(b, 2, 4, 4, generator=g)

    def labels(b):
        return torch.eye(3)[torch.randint(3, (b,), generator=g)]

    inf = float('inf')
    return [
        (latents(2), labels(2), 4, 0.0, 0.0, inf, 1.0),      # deterministic sampler (S_churn = 0)
        (latents(2), labels(2), 4, 40.0, 0.0, inf, 1.0),     # churn at every step (gamma capped at sqrt(2) - 1)
        (latents(1), labels(1), 6, 30.0, 0.05, 50.0, 1.007), # the paper's window: churn only at middle noise levels
        (latents(3), labels(3), 5, 10.0, 1.0, 10.0, 1.0),    # narrow window
        (latents(2), labels(2), 3, 5.0, 100.0, inf, 1.0),    # window above sigma_max: never inside
        (latents(1), labels(1), 5, 80.0, 0.0, 0.5, 1.003),   # only the last, low-noise steps
        (latents(2), labels(2), 6, 2.0, 0.01, 80.0, 1.0),    # small churn, every step but the first
        (latents(3), labels(3), 4, 50.0, 0.0, 1.0, 1.0),
    ]
