"""A parameter annotated `dict[int, torch.Generator]` iterated with `.items()` or `.values()`:
each value is a `torch.Generator`, and drawing from it in compiled code breaks (GM522, vLLM's
sampler: `for i, generator in generators.items(): q[i].exponential_(generator=generator)`).
A mapping annotated with numbers is iterated as before: nothing breaks."""
import torch


def seeded_noise(q: torch.Tensor, generators: dict[int, torch.Generator]) -> torch.Tensor:
    for i, generator in generators.items():
        q[i].exponential_(generator=generator)  # expect: GM522
    return q


def first_draws(q: torch.Tensor, generators: dict[int, torch.Generator]) -> torch.Tensor:
    for generator in generators.values():
        q.exponential_(generator=generator)  # expect: GM522
    return q


def scaled(q: torch.Tensor, scales: dict[int, float]) -> torch.Tensor:
    for i, scale in scales.items():
        q[i].mul_(scale)
    return q


@torch.compile
def f(x, generators, scales):
    q = torch.empty_like(x)
    return seeded_noise(q, generators) + scaled(x.clone(), scales)


@torch.compile
def g(x, generators):
    return first_draws(torch.empty_like(x), generators)


def sample():
    x = torch.rand(3, 4)
    generators = {1: torch.Generator().manual_seed(0)}
    return [(f, (x, generators, {0: 2.0, 2: 0.5}), {}), (g, (x, generators), {})]
