"""torchtune's PPO advantage estimation (`rlhf.estimate_advantages`, called by the PPO recipe on each
batch of generated trajectories): GAE over the response positions, then the advantages are whitened
with the response mask. `whiten` picks the masked variance only when the mask has any True
(`masked_var(x, mask) if mask.any() else x.var()`), and `masked_var` raises a ValueError when the
mask sums to zero (`if mask_sum == 0:`).

Source: https://github.com/pytorch/torchtune/blob/26ffccfbd4b742d7e582592446db95e2ddbe357c/torchtune/rlhf/rewards.py (`masked_mean`,
`masked_var`, `whiten`, `estimate_advantages`; taken there from trl's `core.py`). Called as in
https://github.com/pytorch/torchtune/blob/main/recipes/ppo_full_finetune_single_device.py
(`rlhf.estimate_advantages(trajectory.values, rewards, self._gamma, self._lmbda,
masks=~trajectory.response_padding_masks)`). Tiny shapes:
batch 1-4, response length 3-8.

Breaks: `mask.any()` used as the condition of a conditional expression and `if mask_sum == 0:`
(data-dependent branches on 0-d tensors).

HAND: `whiten` computes both variances and selects with `torch.where(mask.any(), ...)`; the unbiased
masked variance is computed without the `mask_sum == 0` check, which cannot fire there (`whiten` only
uses it when `mask.any()`, i.e. `mask_sum > 0`; where the mask is all False the selected value is
`x.var()`, and the masked one is finite: 0 * (0 / -1)).
"""
from typing import Optional, Tuple

import torch

KIND = "branch"


def masked_mean(
    x: torch.Tensor, mask: torch.Tensor, dim: Optional[int] = None
) -> torch.Tensor:
    """
    Compute mean of tensor with masked values. Taken from https://github.com/huggingface/trl/blob/main/trl/core.py
    """
    return (x * mask).sum(dim=dim) / (mask.sum(dim=dim) + 1e-8)


def masked_var(
    x: torch.Tensor, mask: torch.Tensor, unbiased: bool = True
) -> torch.Tensor:
    """
    Compute variance of tensor with masked values. Taken from https://github.com/huggingface/trl/blob/main/trl/core.py
    """
    mean = masked_mean(x, mask)
    centered_values = x - mean
    var = masked_mean(centered_values.pow(2), mask)
    if unbiased:
        mask_sum = mask.sum()
        if mask_sum == 0:
            raise ValueError(
                "The sum of the mask is zero, which can happen when ``ppo_batch_size=1``;"
                "try increase the ``ppo_batch_size`` or ``gradient_accumulation_steps``"
            )
        # note that if mask_sum == 1, then there is a division by zero issue
        # to avoid it you just need to use a larger minibatch_size
        bessel_correction = mask_sum / (mask_sum - 1)
        var = var * bessel_correction
    return var


def whiten(
    x: torch.Tensor, mask: Optional[torch.Tensor] = None, shift_mean: bool = True
) -> torch.Tensor:
    """
    Whiten (normalises) values, optionally with masked values. Taken from https://github.com/huggingface/trl/blob/main/trl/core.py
    """
    if mask is not None:
        mean = masked_mean(x, mask)
        var = masked_var(x, mask) if mask.any() else x.var()
    else:
        mean, var = x.mean(), x.var()
    whitened = (x - mean) * torch.rsqrt(var + 1e-8)
    if shift_mean:
        whitened += mean
    return whitened


def estimate_advantages(
    values: torch.Tensor,
    rewards: torch.Tensor,
    gamma: float,
    lmbda: float,
    masks: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    Estimates the advantages and returns for the PPO algorithm using Generalized Advantage Estimation
    https://arxiv.org/pdf/1506.02438.pdf
    """

    last_gae_lam = 0
    advantages_reversed = []

    response_length = values.shape[-1]

    # estimate advantage for every predicted token position
    for t in reversed(range(response_length)):
        # value of the next state
        next_values = values[:, t + 1] if t < response_length - 1 else 0.0
        # exponentially discounted temporal difference error:
        # delta_t = r_t + gamma * V(s_{t+1}) - V(s_t)
        delta = rewards[:, t] + gamma * next_values - values[:, t]
        # GAE-Lambda advantage discounting saved for the next iteration
        # as A_t = delta_t + gamma * lambda * A_{t+1} + ...
        last_gae_lam = delta + gamma * lmbda * last_gae_lam
        advantages_reversed.append(last_gae_lam)

    advantages = torch.stack(advantages_reversed[::-1], axis=1)

    # returns are the expected value of taking action a_t at each timepoint over
    # a trajectory. the value estimates v_t are the expected value over all actions
    # over a trajectory - the advantage is the difference between the two
    returns = advantages + values

    # normalize advantages across the batch of trajectories to reduce variance
    if masks is not None:
        advantages = whiten(advantages, mask=masks)
        advantages[~masks] = 0.0
    else:
        advantages = whiten(advantages)

    return advantages, returns


def make():
    return estimate_advantages


def _case(g, b, t, lengths=None, gamma=1.0, lmbda=0.95):
    """lengths: response length of each row (positions past it are padding); None: no mask."""
    values = torch.randn(b, t, generator=g)
    rewards = torch.randn(b, t, generator=g) * 0.1
    if lengths is None:
        return (values, rewards, gamma, lmbda, None)
    masks = torch.arange(t)[None, :] < torch.tensor(lengths)[:, None]
    return (values, rewards, gamma, lmbda, masks)


def inputs():
    g = torch.Generator().manual_seed(2)
    return [
        _case(g, 2, 6, [6, 4]),
        _case(g, 3, 5, [0, 0, 0]),                # every response empty: mask.any() is False -> x.var()
        _case(g, 2, 4, None),                     # no mask
        _case(g, 4, 8, [8, 8, 8, 8]),             # mask all True
        _case(g, 1, 3, [2], gamma=0.99, lmbda=0.9),
        _case(g, 3, 6, [1, 0, 5], gamma=0.9),
        _case(g, 2, 7, [0, 0]),                   # all padding again, other shape
        _case(g, 4, 5, [5, 3, 1, 4], lmbda=1.0),
    ]
