"""timm AdamP (Heo et al., "AdamP: Slowing Down the Slowdown for Momentum Optimizers on Scale-invariant
Weights") in a compiled training step: for each multi-dim weight the update's radial component is
projected out when the weight looks scale-invariant (gradient ~orthogonal to the weight), first per
output channel, then for the whole layer, and weight decay is scaled by `wd_ratio`.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/optim/adamp.py
(`_channel_view`, `_layer_view`, `projection` — with its "FIXME this is a problem for PyTorch XLA" on the
branch — and `AdamP.step`; clovaai/AdamP has the same `_projection` as a method).

Breaks: `if cosine_sim.max() < delta / math.sqrt(param_view.size(1))` branches on a tensor value inside a
loop with an early return; `loss.backward()` and `optimizer.zero_grad()` in the compiled step also break.

HAND: both views' conditions are computed and the projected update / `wd` selected with `torch.where`
(channel view first, then layer view, as the early return orders them); `wd` becomes a 0-d tensor
multiplied into the decay factor. The backward and zero_grad breaks stay.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.optimizer import Optimizer


def _channel_view(x) -> torch.Tensor:
    return x.reshape(x.size(0), -1)


def _layer_view(x) -> torch.Tensor:
    return x.reshape(1, -1)


def projection(p, grad, perturb, delta: float, wd_ratio: float, eps: float):
    expand_size = (-1,) + (1,) * (len(p.shape) - 1)
    conds = []
    projected = []
    for view_func in [_channel_view, _layer_view]:
        param_view = view_func(p)
        grad_view = view_func(grad)
        cosine_sim = F.cosine_similarity(grad_view, param_view, dim=1, eps=eps).abs_()

        conds.append(cosine_sim.max() < delta / math.sqrt(param_view.size(1)))
        p_n = p / param_view.norm(p=2, dim=1).add_(eps).reshape(expand_size)
        projected.append(perturb - p_n * view_func(p_n * perturb).sum(dim=1).reshape(expand_size))

    # the channel view wins when both hold (the loop returned at the first hit)
    perturb = torch.where(conds[0], projected[0], torch.where(conds[1], projected[1], perturb))
    wd = torch.where(conds[0] | conds[1], wd_ratio, 1.)
    return perturb, wd


class AdamP(Optimizer):
    def __init__(
            self,
            params,
            lr=1e-3,
            betas=(0.9, 0.999),
            eps=1e-8,
            weight_decay=0,
            delta=0.1,
            wd_ratio=0.1,
            nesterov=False,
    ):
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            delta=delta,
            wd_ratio=wd_ratio,
            nesterov=nesterov,
        )
        super(AdamP, self).__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue

                grad = p.grad
                beta1, beta2 = group['betas']
                nesterov = group['nesterov']

                state = self.state[p]

                # State initialization
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p)
                    state['exp_avg_sq'] = torch.zeros_like(p)

                # Adam
                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']

                state['step'] += 1
                bias_correction1 = 1 - beta1 ** state['step']
                bias_correction2 = 1 - beta2 ** state['step']

                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

                denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(group['eps'])
                step_size = group['lr'] / bias_correction1

                if nesterov:
                    perturb = (beta1 * exp_avg + (1 - beta1) * grad) / denom
                else:
                    perturb = exp_avg / denom

                # Projection
                wd_ratio = 1.
                if len(p.shape) > 1:
                    perturb, wd_ratio = projection(p, grad, perturb, group['delta'], group['wd_ratio'], group['eps'])

                # Weight decay
                if group['weight_decay'] > 0:
                    p.mul_(1. - group['lr'] * group['weight_decay'] * wd_ratio)

                # Step
                p.add_(perturb, alpha=-step_size)

        return loss


class TrainStep(nn.Module):
    """conv -> BatchNorm (per-channel scale-invariant weight), linear -> LayerNorm without affine (layer
    scale-invariant weight), linear head (not scale-invariant): the three outcomes of the projection."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 4, 3, bias=False)
        self.bn = nn.BatchNorm1d(4)
        self.fc = nn.Linear(8, 6, bias=False)
        self.ln = nn.LayerNorm(6, elementwise_affine=False)
        self.head = nn.Linear(6, 3)
        self.optimizer = AdamP(self.parameters(), lr=1e-2, betas=(0.9, 0.999), weight_decay=1e-2,
                               nesterov=True)

    def forward(self, x, target):
        h = torch.relu(self.bn(self.conv(x))).flatten(1)
        h = torch.relu(self.ln(self.fc(h)))
        loss = F.cross_entropy(self.head(h), target)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.detach()


def make():
    torch.manual_seed(0)
    return TrainStep()


def inputs():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(6, 2, 4, generator=g), torch.randint(0, 3, (6,), generator=g)) for _ in range(8)]


KIND = "branch-loop"
