"""CleanRL PPO (ppo.py): the per-minibatch loss of the update epoch loop, with the Agent's
get_action_and_value (Categorical policy head + value head).

Source: https://github.com/vwxyzjn/cleanrl/blob/master/cleanrl/ppo.py
Breaks: `clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]` (Tensor.item()
into a Python list owned by the training loop), inside `with torch.no_grad():`. The minibatch body is
wrapped into a function of the rollout buffers; `args` is a module-level namespace as in the script;
envs' spaces become constants (obs dim 4, 3 actions).
HAND: none — the training loop's `clipfracs` list must receive Python floats (it is averaged with
np.mean for logging); a float can only come out of the tensor by synchronising (.item()/tolist()).
"""
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical

KIND = "Tensor.item() into list"
GRAD = True

args = SimpleNamespace(clip_coef=0.2, norm_adv=True, clip_vloss=True, ent_coef=0.01, vf_coef=0.5)


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim=4, n_actions=3):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 16)),
            nn.Tanh(),
            layer_init(nn.Linear(16, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 16)),
            nn.Tanh(),
            layer_init(nn.Linear(16, n_actions), std=0.01),
        )

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


class PPOMinibatchLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.agent = Agent()

    def forward(self, b_obs, b_actions, b_logprobs, b_advantages, b_returns, b_values, mb_inds, clipfracs):
        agent = self.agent
        _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions.long()[mb_inds])
        logratio = newlogprob - b_logprobs[mb_inds]
        ratio = logratio.exp()

        with torch.no_grad():
            # calculate approx_kl http://joschu.net/blog/kl-approx.html
            old_approx_kl = (-logratio).mean()
            approx_kl = ((ratio - 1) - logratio).mean()
            clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]

        mb_advantages = b_advantages[mb_inds]
        if args.norm_adv:
            mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

        # Policy loss
        pg_loss1 = -mb_advantages * ratio
        pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
        pg_loss = torch.max(pg_loss1, pg_loss2).mean()

        # Value loss
        newvalue = newvalue.view(-1)
        if args.clip_vloss:
            v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
            v_clipped = b_values[mb_inds] + torch.clamp(
                newvalue - b_values[mb_inds],
                -args.clip_coef,
                args.clip_coef,
            )
            v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
            v_loss_max = torch.max(v_loss_unclipped, v_loss_clipped)
            v_loss = 0.5 * v_loss_max.mean()
        else:
            v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()

        entropy_loss = entropy.mean()
        loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
        return loss, pg_loss, v_loss, entropy_loss, old_approx_kl, approx_kl


def make():
    torch.manual_seed(0)
    return PPOMinibatchLoss()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    n = 16
    for spread in (0.0, 0.1, 0.5, 1.0, 2.0, 0.05, 0.3, 3.0):
        b_obs = torch.randn(n, 4, generator=g)
        b_actions = torch.randint(0, 3, (n,), generator=g).float()
        b_logprobs = torch.log(torch.full((n,), 1.0 / 3)) + spread * torch.randn(n, generator=g)
        b_advantages = torch.randn(n, generator=g)
        b_returns = torch.randn(n, generator=g)
        b_values = b_returns + spread * torch.randn(n, generator=g)
        mb_inds = torch.randperm(n, generator=g)[:8].numpy()
        out.append((b_obs, b_actions, b_logprobs, b_advantages, b_returns, b_values, mb_inds, [0.1] * (len(out) % 3)))
    return out
