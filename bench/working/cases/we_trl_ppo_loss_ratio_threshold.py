"""TRL's PPO loss (the RLHF PPOTrainer of trl 0.7): clipped value and policy losses over the masked
response tokens; when the masked mean probability ratio exceeds `ratio_threshold` the batch is
skipped (losses multiplied by 0) with a warning that prints the ratio; the stats use `masked_var`,
which raises when the mask is empty.

Source: https://github.com/huggingface/trl/blob/v0.7.4/trl/trainer/ppo_trainer.py (`PPOTrainer.loss`)
and https://github.com/huggingface/trl/blob/v0.7.4/trl/core.py (`masked_mean`, `masked_var`,
`clip_by_value`, `entropy_from_logits`, `flatten_dict`). `PPOConfig` defaults: cliprange 0.2,
cliprange_value 0.2, vf_coef 0.1, ratio_threshold 10.0. Tiny shapes: batch 2-3, 4-6 response
tokens, vocabulary 5.

Breaks: `masked_mean(ratio, mask).item()` used in `if avg_ratio > self.config.ratio_threshold:`
(Tensor.item()) and `if mask_sum == 0:` in `masked_var` (data-dependent branch).

HAND: the skip becomes `torch.where(avg_ratio > threshold, x * 0.0, x)` on the three losses; the
warning (same text, with the ratio formatted from the same float) and the empty-mask `ValueError`
are issued at run time by `torch.library.custom_op`s with an ORDERED effect.
"""
import warnings
from collections.abc import Mapping
from types import SimpleNamespace

import torch

KIND = "item-warn-raise"
GRAD = True


def flatten_dict(nested, sep="/"):
    """Flatten dictionary and concatenate nested keys with separator."""

    def recurse(nest, prefix, into):
        for k, v in nest.items():
            if sep in k:
                raise ValueError(f"separator '{sep}' not allowed to be in key '{k}'")
            if isinstance(v, Mapping):
                recurse(v, prefix + k + sep, into)
            else:
                into[prefix + k] = v

    flat = {}
    recurse(nested, "", flat)
    return flat


def masked_mean(values, mask, axis=None):
    """Compute mean of tensor with a masked values."""
    if axis is not None:
        return (values * mask).sum(axis=axis) / mask.sum(axis=axis)
    else:
        return (values * mask).sum() / mask.sum()


def masked_var(values, mask, unbiased=True):
    """Compute variance of tensor with masked values."""
    mean = masked_mean(values, mask)
    centered_values = values - mean
    variance = masked_mean(centered_values**2, mask)
    if unbiased:
        mask_sum = mask.sum()
        if mask_sum == 0:
            raise ValueError(
                "The sum of the mask is zero, which can happen when `mini_batch_size=1`;"
                "try increase the `mini_batch_size` or `gradient_accumulation_steps`"
            )
        # note that if mask_sum == 1, then there is a division by zero issue
        # to avoid it you just need to use a larger minibatch_size
        bessel_correction = mask_sum / (mask_sum - 1)
        variance = variance * bessel_correction
    return variance


def clip_by_value(x, tensor_min, tensor_max):
    """
    Tensor extenstion to torch.clamp
    https://github.com/pytorch/pytorch/issues/2793#issuecomment-428784713
    """
    clipped = torch.max(torch.min(x, tensor_max), tensor_min)
    return clipped


def entropy_from_logits(logits):
    """Calculate entropy from logits."""
    pd = torch.nn.functional.softmax(logits, dim=-1)
    entropy = torch.logsumexp(logits, axis=-1) - torch.sum(pd * logits, axis=-1)
    return entropy


class PPOTrainer:
    def __init__(self):
        self.config = SimpleNamespace(cliprange=0.2, cliprange_value=0.2, vf_coef=0.1, ratio_threshold=10.0)

    def loss(self, old_logprobs, values, logits, vpreds, logprobs, mask, advantages, returns):
        """
        Calculate policy and value losses.
        """

        vpredclipped = clip_by_value(
            vpreds,
            values - self.config.cliprange_value,
            values + self.config.cliprange_value,
        )

        vf_losses1 = (vpreds - returns) ** 2
        vf_losses2 = (vpredclipped - returns) ** 2
        vf_loss = 0.5 * masked_mean(torch.max(vf_losses1, vf_losses2), mask)
        vf_clipfrac = masked_mean(torch.gt(vf_losses2, vf_losses1).float(), mask)

        ratio = torch.exp(logprobs - old_logprobs)

        pg_losses = -advantages * ratio
        pg_losses2 = -advantages * torch.clamp(ratio, 1.0 - self.config.cliprange, 1.0 + self.config.cliprange)

        pg_loss = masked_mean(torch.max(pg_losses, pg_losses2), mask)
        pg_clipfrac = masked_mean(torch.gt(pg_losses2, pg_losses).float(), mask)

        loss = pg_loss + self.config.vf_coef * vf_loss

        avg_ratio = masked_mean(ratio, mask).item()
        if avg_ratio > self.config.ratio_threshold:
            warnings.warn(
                f"The average ratio of batch ({avg_ratio:.2f}) exceeds threshold {self.config.ratio_threshold:.2f}. Skipping batch."
            )
            pg_loss = pg_loss * 0.0
            vf_loss = vf_loss * 0.0
            loss = loss * 0.0

        entropy = masked_mean(entropy_from_logits(logits), mask)

        approxkl = 0.5 * masked_mean((logprobs - old_logprobs) ** 2, mask)
        policykl = masked_mean(old_logprobs - logprobs, mask)

        return_mean, return_var = masked_mean(returns, mask), masked_var(returns, mask)
        value_mean, value_var = masked_mean(values, mask), masked_var(values, mask)

        stats = dict(
            loss=dict(policy=pg_loss.detach(), value=vf_loss.detach(), total=loss.detach()),
            policy=dict(
                entropy=entropy.detach(),
                approxkl=approxkl.detach(),
                policykl=policykl.detach(),
                clipfrac=pg_clipfrac.detach(),
                advantages=advantages.detach(),
                advantages_mean=masked_mean(advantages, mask).detach(),
                ratio=ratio.detach(),
            ),
            returns=dict(mean=return_mean.detach(), var=return_var.detach()),
            val=dict(
                vpred=masked_mean(vpreds, mask).detach(),
                error=masked_mean((vpreds - returns) ** 2, mask).detach(),
                clipfrac=vf_clipfrac.detach(),
                mean=value_mean.detach(),
                var=value_var.detach(),
            ),
        )
        return pg_loss, self.config.vf_coef * vf_loss, flatten_dict(stats)


def make():
    return PPOTrainer().loss


def _batch(g, b, t, shift=0.0, mask_from=None):
    old_logprobs = -torch.rand(b, t, generator=g) * 3
    values = torch.randn(b, t, generator=g)
    logits = torch.randn(b, t, 5, generator=g, requires_grad=True)
    vpreds = (values + 0.3 * torch.randn(b, t, generator=g)).requires_grad_()
    logprobs = (old_logprobs + shift + 0.2 * torch.randn(b, t, generator=g)).requires_grad_()
    mask = torch.ones(b, t)
    if mask_from is not None:
        for i, start in enumerate(mask_from):
            mask[i, start:] = 0
    advantages = torch.randn(b, t, generator=g)
    returns = values + torch.randn(b, t, generator=g)
    return (old_logprobs, values, logits, vpreds, logprobs, mask, advantages, returns)


def inputs():
    g = torch.Generator().manual_seed(7)
    return [
        _batch(g, 2, 4),
        _batch(g, 2, 5, mask_from=(3, 5)),
        _batch(g, 3, 4, shift=3.0),                      # ratio ~ e^3 > 10: batch skipped, warning
        _batch(g, 2, 6, shift=0.5, mask_from=(2, 4)),
        _batch(g, 1, 4, shift=2.5),                      # ratio ~ 12: skipped
        _batch(g, 2, 4, shift=2.0),                      # ratio ~ 7.5: kept
        _batch(g, 3, 5, shift=-1.0, mask_from=(1, 5, 3)),
        _batch(g, 2, 4, shift=4.0, mask_from=(1, 2)),    # skipped, partial mask
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(8)
    return [
        _batch(g, 2, 4, mask_from=(0, 0)),               # empty mask: masked_var raises
        _batch(g, 1, 3, shift=5.0, mask_from=(0,)),      # NaN ratio (no warning), then the raise
    ]
