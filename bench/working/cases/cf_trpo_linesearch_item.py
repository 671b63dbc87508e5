"""TRPO's backtracking line search: prints the surrogate loss with `.item()`, and accepts a step
with `if ratio.item() > accept_ratio and actual_improve.item() > 0: return True, xnew` after
writing the candidate parameters into the policy.

Source: https://github.com/ikostrikov/pytorch-trpo/blob/master/trpo.py (`linesearch`,
`trpo_step`'s `get_loss`), https://github.com/ikostrikov/pytorch-trpo/blob/master/utils/utils.py
(`get_flat_params_from`, `set_flat_params_to`), utils/math.py (`normal_log_density`) and
models.py (`Policy`), with a tiny policy and a fixed batch (the `Variable(...)` wrappers dropped).

Breaks: `print("fval before", fval.item())` (Tensor.item()), `int(np.prod(list(param.size())))` in
`set_flat_params_to` (NumPy on the traced sizes: data-dependent operator), and the
`set_flat_params_to(model, xnew)` call inside the `enumerate(np.arange(...))` loop (the frame is
skipped); the later `.item()` reads and the `ratio.item() > accept_ratio` test run in the skipped frame.

HAND: none — the search returns a Python bool (`True, xnew` / `False, x`) chosen from the loss
values and prints Python floats, so host reads of the losses stay.
"""
import math

import numpy as np
import torch
import torch.nn as nn

KIND = "item+print-loop"


def normal_log_density(x, mean, log_std, std):
    var = std.pow(2)
    log_density = -(x - mean).pow(2) / (
        2 * var) - 0.5 * math.log(2 * math.pi) - log_std
    return log_density.sum(1, keepdim=True)


def get_flat_params_from(model):
    params = []
    for param in model.parameters():
        params.append(param.data.view(-1))

    flat_params = torch.cat(params)
    return flat_params


def set_flat_params_to(model, flat_params):
    prev_ind = 0
    for param in model.parameters():
        flat_size = int(np.prod(list(param.size())))
        param.data.copy_(
            flat_params[prev_ind:prev_ind + flat_size].view(param.size()))
        prev_ind += flat_size


def linesearch(model,
               f,
               x,
               fullstep,
               expected_improve_rate,
               max_backtracks=10,
               accept_ratio=.1):
    fval = f(True).data
    print("fval before", fval.item())
    for (_n_backtracks, stepfrac) in enumerate(.5**np.arange(max_backtracks)):
        xnew = x + stepfrac * fullstep
        set_flat_params_to(model, xnew)
        newfval = f(True).data
        actual_improve = fval - newfval
        expected_improve = expected_improve_rate * stepfrac
        ratio = actual_improve / expected_improve
        print("a/e/r", actual_improve.item(), expected_improve.item(), ratio.item())

        if ratio.item() > accept_ratio and actual_improve.item() > 0:
            print("fval after", newfval.item())
            return True, xnew
    return False, x


class Policy(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(num_inputs, 8)
        self.action_mean = nn.Linear(8, num_outputs)
        self.action_mean.weight.data.mul_(0.1)
        self.action_mean.bias.data.mul_(0.0)
        self.action_log_std = nn.Parameter(torch.zeros(1, num_outputs))

    def forward(self, x):
        x = torch.tanh(self.affine1(x))
        action_mean = self.action_mean(x)
        action_log_std = self.action_log_std.expand_as(action_mean)
        action_std = torch.exp(action_log_std)
        return action_mean, action_log_std, action_std


class TRPOLineSearch(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy_net = Policy(3, 2)
        self.register_buffer("states", torch.randn(6, 3))
        self.register_buffer("actions", torch.randn(6, 2))
        self.register_buffer("advantages", torch.randn(6, 1))
        with torch.no_grad():
            mean, log_std, std = self.policy_net(self.states)
            self.register_buffer("fixed_log_prob", normal_log_density(self.actions, mean, log_std, std))

    def get_loss(self, volatile=False):
        with torch.no_grad():
            action_means, action_log_stds, action_stds = self.policy_net(self.states)
        log_prob = normal_log_density(self.actions, action_means, action_log_stds, action_stds)
        action_loss = -self.advantages * torch.exp(log_prob - self.fixed_log_prob)
        return action_loss.mean()

    def forward(self, fullstep, expected_improve_rate):
        prev_params = get_flat_params_from(self.policy_net)
        success, new_params = linesearch(self.policy_net, self.get_loss, prev_params, fullstep,
                                         expected_improve_rate)
        set_flat_params_to(self.policy_net, new_params)
        return success, new_params


def make():
    torch.manual_seed(0)
    return TRPOLineSearch()


def inputs():
    torch.manual_seed(0)
    n = sum(p.numel() for p in make().parameters())
    out = []
    for scale, rate in [(0.1, 0.01), (1.0, 0.5), (0.01, 1e-4), (3.0, 0.2), (0.5, -0.1), (0.05, 10.0), (0.2, 0.001), (0.0, 0.1)]:
        out.append((torch.randn(n) * scale, torch.tensor(rate)))
    return out
