"""Drawing noise inside `torch.random.fork_rng` so that the caller's global random stream is left
untouched — the construct of a pytorch issue's repro (`with torch.random.fork_rng(devices=...):
return torch.randn((1, 2))`), here adding the forked noise to a feature row.

Source: https://github.com/pytorch/pytorch/issues/139603 ("`torch.compile` doesn't support `set`
arguments": `fork_rng(devices={torch.device("cuda:0")})` inside a compiled function; the fix
https://github.com/pytorch/pytorch/pull/186168 makes dynamo treat `fork_rng` as a Python context
manager). CPU only here, so `devices=[]` (only the CPU generator is forked).

Breaks: `with torch.random.fork_rng(devices=[]):` (dynamo takes `fork_rng` for an in-graph torch
function and finds it returns a non-Tensor, a generator-based context manager that saves and
restores the global generator state).

HAND: none — the noise must come from the global generator's current state without advancing it;
saving and restoring that state needs the same untraceable generator calls.
"""
import torch

KIND = "ctx-fork-rng"
GRAD = True


def add_forked_noise(x, noise_scale):
    h = torch.tanh(x)
    with torch.random.fork_rng(devices=[]):
        noise = torch.randn((1, x.shape[-1]))
    return h + noise_scale * noise


def make():
    return add_forked_noise


def inputs():
    g = torch.Generator().manual_seed(9)
    return [
        (torch.randn(2, 3, generator=g), 0.1),
        (torch.randn(1, 2, generator=g), 1.0),
        (torch.randn(4, 5, generator=g), 0.0),
        (torch.zeros(3, 3), 0.5),
        (torch.randn(2, 4, generator=g) * 5, 2.0),
        (torch.ones(1, 1), 0.25),
        (torch.randn(3, 2, generator=g), -1.0),
        (torch.randn(2, 6, generator=g), 0.01),
    ]
