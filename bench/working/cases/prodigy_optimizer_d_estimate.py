"""The Prodigy optimizer (Adam with a learned step size D): each step accumulates the D-estimate's
numerator and denominator as Python floats read from the device, skips the step when the
denominator is 0, and takes max/min of Python floats to update `group['d']`.

Source: https://github.com/konstmish/prodigy/blob/main/prodigyopt/prodigy.py (`Prodigy.step`,
reduced: no FSDP all-reduce). Compiled here as part of a step module that installs the gradients
and steps (the usual `torch.compile(optimizer.step)`-style use).

Breaks: `if p.any():` in the state initialisation (data-dependent branch on the first step);
`torch.dot(...).item()` for `d_numerator` and `s.abs().sum().item()` for `d_denom` (host reads).

HAND: none — D, d_max, d_hat and the numerator/denominator are Python floats kept in
`param_groups`, which the next step reads with `max`/`min` and callers read for logging
(`group['d'] * group['lr']` is the effective LR); keeping them as tensors changes the optimizer's
visible state, and the early `return` when `d_denom == 0` needs the value on the host.
"""
import math

import torch
import torch.optim
from torch import nn


class Prodigy(torch.optim.Optimizer):
    def __init__(self, params, lr=1.0,
                 betas=(0.9, 0.999), beta3=None,
                 eps=1e-8, weight_decay=0, decouple=True,
                 use_bias_correction=False, safeguard_warmup=False,
                 d0=1e-6, d_coef=1.0, growth_rate=float('inf'),
                 slice_p=1):
        if not 0.0 < d0:
            raise ValueError("Invalid d0 value: {}".format(d0))
        if not 0.0 < lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        defaults = dict(lr=lr, betas=betas, beta3=beta3,
                        eps=eps, weight_decay=weight_decay,
                        d=d0, d0=d0, d_max=d0,
                        d_numerator=0.0, d_coef=d_coef,
                        k=0, growth_rate=growth_rate,
                        use_bias_correction=use_bias_correction,
                        decouple=decouple, safeguard_warmup=safeguard_warmup,
                        slice_p=slice_p)
        self.d0 = d0
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()

        d_denom = 0.0

        group = self.param_groups[0]
        use_bias_correction = group['use_bias_correction']
        beta1, beta2 = group['betas']
        beta3 = group['beta3']
        if beta3 is None:
            beta3 = math.sqrt(beta2)
        k = group['k']

        d = group['d']
        d_max = group['d_max']
        d_coef = group['d_coef']
        lr = max(group['lr'] for group in self.param_groups)

        if use_bias_correction:
            bias_correction = ((1 - beta2**(k+1))**0.5) / (1 - beta1**(k+1))
        else:
            bias_correction = 1

        dlr = d*lr*bias_correction

        growth_rate = group['growth_rate']
        decouple = group['decouple']

        d_numerator = group['d_numerator']
        d_numerator *= beta3

        for group in self.param_groups:
            decay = group['weight_decay']
            k = group['k']
            eps = group['eps']
            group_lr = group['lr']
            d0 = group['d0']
            safeguard_warmup = group['safeguard_warmup']
            slice_p = group['slice_p']

            for p in group['params']:
                if p.grad is None:
                    continue

                grad = p.grad.data

                # Apply weight decay (coupled variant)
                if decay != 0 and not decouple:
                    grad.add_(p.data, alpha=decay)

                state = self.state[p]

                # State initialization
                if 'step' not in state:
                    state['step'] = 0

                    state['s'] = torch.zeros_like(p.data.flatten()[::slice_p]).detach()

                    if p.any():
                        state['p0'] = p.flatten()[::slice_p].detach().clone()
                    else:
                        # All values are zero, so save VRAM with a zero-tensor
                        state['p0'] = torch.tensor(0, device=p.device, dtype=p.dtype)

                    # Exponential moving average of gradient values
                    state['exp_avg'] = torch.zeros_like(p.data).detach()
                    # Exponential moving average of squared gradient values
                    state['exp_avg_sq'] = torch.zeros_like(p.data).detach()

                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']

                s = state['s']
                p0 = state['p0']

                if group_lr > 0.0:
                    # we use d / d0 instead of just d to avoid getting values that are too small
                    sliced_grad = grad.flatten()[::slice_p]
                    d_numerator += (d / d0) * dlr * torch.dot(sliced_grad, p0.data - p.data.flatten()[::slice_p]).item()

                    # Adam EMA updates
                    exp_avg.mul_(beta1).add_(grad, alpha=d * (1-beta1))
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=d * d * (1-beta2))

                    if safeguard_warmup:
                        s.mul_(beta3).add_(sliced_grad, alpha=((d / d0) * d))
                    else:
                        s.mul_(beta3).add_(sliced_grad, alpha=((d / d0) * dlr))
                    d_denom += s.abs().sum().item()

        d_hat = d

        # if we have not done any progres, return
        # if we have any gradients available, will have d_denom > 0 (unless \|g\|=0)
        if d_denom == 0:
            return loss

        if lr > 0.0:
            global_d_numerator = d_numerator
            global_d_denom = d_denom

            d_hat = d_coef * global_d_numerator / global_d_denom
            if d == group['d0']:
                d = max(d, d_hat)
            d_max = max(d_max, d_hat)
            d = min(d_max, d * growth_rate)

        for group in self.param_groups:
            group['d_numerator'] = global_d_numerator
            group['d_denom'] = global_d_denom
            group['d'] = d
            group['d_max'] = d_max
            group['d_hat'] = d_hat

            decay = group['weight_decay']
            k = group['k']
            eps = group['eps']

            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data

                state = self.state[p]

                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']

                state['step'] += 1

                denom = exp_avg_sq.sqrt().add_(d * eps)

                # Apply weight decay (decoupled variant)
                if decay != 0 and decouple:
                    p.data.add_(p.data, alpha=-decay * dlr)

                ### Take step
                p.data.addcdiv_(exp_avg, denom, value=-dlr)

            group['k'] = k + 1

        return loss


class OptimizerStep(nn.Module):
    """Installs the given gradients on a tiny model and takes one Prodigy step."""

    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)
        with torch.no_grad():
            self.net.bias.zero_()   # an all-zero parameter: p0 is stored as a 0-d zero
        self.opt = Prodigy(self.net.parameters(), lr=1.0, weight_decay=0.01, d0=1e-3)

    def forward(self, grad_w, grad_b):
        self.net.weight.grad = grad_w
        self.net.bias.grad = grad_b
        self.opt.step()
        return self.net.weight.detach().clone(), self.net.bias.detach().clone()


def make():
    torch.manual_seed(0)
    return OptimizerStep()


def inputs():
    g = torch.Generator().manual_seed(2)
    calls = []
    for n in range(9):
        gw = torch.randn(3, 4, generator=g)
        gb = torch.randn(3, generator=g)
        if n == 0:
            gw.zero_()
            gb.zero_()   # no progress yet: d_denom == 0, the step returns early
        calls.append((gw, gb))
    return calls


KIND = "item+branch"
