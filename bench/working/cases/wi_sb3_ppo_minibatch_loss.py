"""Stable-Baselines3 PPO, one minibatch of `PPO.train()`: evaluate the rollout's actions under the
current policy (`ActorCriticPolicy.evaluate_actions`, MLP extractor, categorical action
distribution), normalize the advantages, build the clipped surrogate, value and entropy losses,
append each loss to SB3's logging lists with `.item()`, compute the approximate KL with
`.cpu().numpy()` and stop early (with a print when `verbose >= 1`) when it exceeds
`1.5 * target_kl`. The body of the minibatch loop is the method compiled here; it returns the loss
(the caller runs backward and the optimizer step, as the loop does after it) and `continue_training`
(the loop `break`s when it is False).

Source: https://github.com/DLR-RM/stable-baselines3/blob/e05d2dbe6eda0acd0ef2e316e3e4065677add3eb/stable_baselines3/ppo/ppo.py
(`PPO.train`, the body of `for rollout_data in self.rollout_buffer.get(self.batch_size):` up to the
optimizer step),
https://github.com/DLR-RM/stable-baselines3/blob/e05d2dbe6eda0acd0ef2e316e3e4065677add3eb/stable_baselines3/common/policies.py
(`ActorCriticPolicy.evaluate_actions`, `_get_action_dist_from_latent`, `extract_features`),
https://github.com/DLR-RM/stable-baselines3/blob/e05d2dbe6eda0acd0ef2e316e3e4065677add3eb/stable_baselines3/common/torch_layers.py
(`FlattenExtractor`, `MlpExtractor`) and
https://github.com/DLR-RM/stable-baselines3/blob/e05d2dbe6eda0acd0ef2e316e3e4065677add3eb/stable_baselines3/common/distributions.py
(`CategoricalDistribution`). `RolloutBufferSamples` as in common/type_aliases.py. Reduced: Box
observations of 4 floats, Discrete(3) actions, net_arch 8-8, clip ranges as constants instead of
schedules. Tiny shapes: minibatches of 1-8 samples.

Breaks: `policy_loss.item()`, `.item()` of the clip fraction, `value_loss.item()`,
`entropy_loss.item()` (`Tensor.item()` for the logging lists);
`if self.target_kl is not None and approx_kl_div > 1.5 * self.target_kl:` (a branch on the NumPy value
of the approximate KL, which dynamo traces as a tensor) and the `print` in that branch.

HAND: none — the method's job includes handing Python floats to SB3's logger lists every minibatch
and telling the caller's Python loop whether to `break` (and printing why); all of these are
host-side reads of tensor values, so some device-to-host break stays whatever the rewrite.
"""
from typing import NamedTuple

import torch as th
from torch import nn
from torch.distributions import Categorical
from torch.nn import functional as F

KIND = "item+numpy+print"
GRAD = True


class RolloutBufferSamples(NamedTuple):
    observations: th.Tensor
    actions: th.Tensor
    old_values: th.Tensor
    old_log_prob: th.Tensor
    advantages: th.Tensor
    returns: th.Tensor


class FlattenExtractor(nn.Module):
    def __init__(self, features_dim):
        super().__init__()
        self.features_dim = features_dim
        self.flatten = nn.Flatten()

    def forward(self, observations: th.Tensor) -> th.Tensor:
        return self.flatten(observations)


class MlpExtractor(nn.Module):
    def __init__(self, feature_dim, net_arch, activation_fn):
        super().__init__()
        policy_net = []
        value_net = []
        last_layer_dim_pi = feature_dim
        last_layer_dim_vf = feature_dim
        for curr_layer_dim in net_arch["pi"]:
            policy_net.append(nn.Linear(last_layer_dim_pi, curr_layer_dim))
            policy_net.append(activation_fn())
            last_layer_dim_pi = curr_layer_dim
        for curr_layer_dim in net_arch["vf"]:
            value_net.append(nn.Linear(last_layer_dim_vf, curr_layer_dim))
            value_net.append(activation_fn())
            last_layer_dim_vf = curr_layer_dim
        self.latent_dim_pi = last_layer_dim_pi
        self.latent_dim_vf = last_layer_dim_vf
        self.policy_net = nn.Sequential(*policy_net)
        self.value_net = nn.Sequential(*value_net)

    def forward(self, features: th.Tensor):
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return self.policy_net(features)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return self.value_net(features)


class CategoricalDistribution:
    def __init__(self, action_dim: int):
        self.action_dim = action_dim

    def proba_distribution_net(self, latent_dim: int) -> nn.Module:
        return nn.Linear(latent_dim, self.action_dim)

    def proba_distribution(self, action_logits: th.Tensor) -> "CategoricalDistribution":
        self.distribution = Categorical(logits=action_logits)
        return self

    def log_prob(self, actions: th.Tensor) -> th.Tensor:
        return self.distribution.log_prob(actions)

    def entropy(self) -> th.Tensor:
        return self.distribution.entropy()


class ActorCriticPolicy(nn.Module):
    def __init__(self, obs_dim: int, n_actions: int, net_arch=(8, 8)):
        super().__init__()
        self.features_extractor = FlattenExtractor(obs_dim)
        self.share_features_extractor = True
        self.mlp_extractor = MlpExtractor(obs_dim, dict(pi=list(net_arch), vf=list(net_arch)), nn.Tanh)
        self.action_dist = CategoricalDistribution(n_actions)
        self.action_net = self.action_dist.proba_distribution_net(latent_dim=self.mlp_extractor.latent_dim_pi)
        self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)

    def extract_features(self, obs: th.Tensor) -> th.Tensor:
        preprocessed_obs = obs.float()  # preprocess_obs for a Box space
        return self.features_extractor(preprocessed_obs)

    def _get_action_dist_from_latent(self, latent_pi: th.Tensor) -> CategoricalDistribution:
        mean_actions = self.action_net(latent_pi)
        return self.action_dist.proba_distribution(action_logits=mean_actions)

    def evaluate_actions(self, obs: th.Tensor, actions: th.Tensor):
        # Preprocess the observation if needed
        features = self.extract_features(obs)
        latent_pi, latent_vf = self.mlp_extractor(features)
        distribution = self._get_action_dist_from_latent(latent_pi)
        log_prob = distribution.log_prob(actions)
        values = self.value_net(latent_vf)
        entropy = distribution.entropy()
        return values, log_prob, entropy


class PPO(nn.Module):
    def __init__(self, policy, clip_range=0.2, clip_range_vf=None, normalize_advantage=True,
                 ent_coef=0.0, vf_coef=0.5, target_kl=None, verbose=0):
        super().__init__()
        self.policy = policy
        self.clip_range = clip_range
        self.clip_range_vf = clip_range_vf
        self.normalize_advantage = normalize_advantage
        self.ent_coef = ent_coef
        self.vf_coef = vf_coef
        self.target_kl = target_kl
        self.verbose = verbose
        self.entropy_losses = []
        self.pg_losses, self.value_losses = [], []
        self.clip_fractions = []
        self.approx_kl_divs = []

    def train_minibatch(self, rollout_data: RolloutBufferSamples, epoch: int):
        clip_range = self.clip_range
        clip_range_vf = self.clip_range_vf
        continue_training = True

        actions = rollout_data.actions
        # Discrete action space: convert discrete action from float to long
        actions = rollout_data.actions.long().flatten()

        values, log_prob, entropy = self.policy.evaluate_actions(rollout_data.observations, actions)
        values = values.flatten()
        # Normalize advantage
        advantages = rollout_data.advantages
        # Normalization does not make sense if mini batchsize == 1, see GH issue #325
        if self.normalize_advantage and len(advantages) > 1:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

        # ratio between old and new policy, should be one at the first iteration
        ratio = th.exp(log_prob - rollout_data.old_log_prob)

        # clipped surrogate loss
        policy_loss_1 = advantages * ratio
        policy_loss_2 = advantages * th.clamp(ratio, 1 - clip_range, 1 + clip_range)
        policy_loss = -th.min(policy_loss_1, policy_loss_2).mean()

        # Logging
        self.pg_losses.append(policy_loss.item())
        clip_fraction = th.mean((th.abs(ratio - 1) > clip_range).float()).item()
        self.clip_fractions.append(clip_fraction)

        if self.clip_range_vf is None:
            # No clipping
            values_pred = values
        else:
            # Clip the difference between old and new value
            # NOTE: this depends on the reward scaling
            values_pred = rollout_data.old_values + th.clamp(
                values - rollout_data.old_values, -clip_range_vf, clip_range_vf
            )
        # Value loss using the TD(gae_lambda) target
        value_loss = F.mse_loss(rollout_data.returns, values_pred)
        self.value_losses.append(value_loss.item())

        # Entropy loss favor exploration
        if entropy is None:
            # Approximate entropy when no analytical form
            entropy_loss = -th.mean(-log_prob)
        else:
            entropy_loss = -th.mean(entropy)

        self.entropy_losses.append(entropy_loss.item())

        loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss

        # Calculate approximate form of reverse KL Divergence for early stopping
        # see issue #417: https://github.com/DLR-RM/stable-baselines3/issues/417
        # and discussion in PR #419: https://github.com/DLR-RM/stable-baselines3/pull/419
        # and Schulman blog: http://joschu.net/blog/kl-approx.html
        with th.no_grad():
            log_ratio = log_prob - rollout_data.old_log_prob
            approx_kl_div = th.mean((th.exp(log_ratio) - 1) - log_ratio).cpu().numpy()
            self.approx_kl_divs.append(approx_kl_div)

        if self.target_kl is not None and approx_kl_div > 1.5 * self.target_kl:
            continue_training = False
            if self.verbose >= 1:
                print(f"Early stopping at step {epoch} due to reaching max kl: {approx_kl_div:.2f}")
            return loss, continue_training  # the loop `break`s here, before the optimizer step

        return loss, continue_training


def make():
    th.manual_seed(0)
    policy = ActorCriticPolicy(obs_dim=4, n_actions=3)
    ppo = PPO(policy, clip_range=0.2, clip_range_vf=0.5, ent_coef=0.01, vf_coef=0.5,
              target_kl=0.01, verbose=1)
    return ppo.train_minibatch


def _batch(g, policy, n, drift):
    """a minibatch whose behaviour log-probs are the current policy's plus noise of size `drift`
    (0: the first epoch, ratio 1; large: the policy moved far, the KL passes 1.5 * target_kl)."""
    obs = th.randn(n, 4, generator=g)
    actions = th.randint(0, 3, (n, 1), generator=g).float()
    with th.no_grad():
        values, log_prob, _ = policy.evaluate_actions(obs, actions.long().flatten())
    old_log_prob = log_prob + drift * th.randn(n, generator=g)
    old_values = values.flatten() + 0.3 * th.randn(n, generator=g)
    advantages = th.randn(n, generator=g)
    returns = old_values + advantages
    return RolloutBufferSamples(obs, actions, old_values, old_log_prob, advantages, returns)


def inputs():
    g = th.Generator().manual_seed(4)
    policy = make().__self__.policy  # the policy as make() builds it
    return [
        (_batch(g, policy, 8, 0.0), 0),       # the first epoch: ratio 1, continue
        (_batch(g, policy, 8, 0.5), 1),       # KL above 1.5 * target_kl: early stop and print
        (_batch(g, policy, 1, 0.0), 0),       # minibatch of one: no advantage normalization
        (_batch(g, policy, 4, 0.05), 2),
        (_batch(g, policy, 6, 1.0), 3),       # early stop
        (_batch(g, policy, 8, 0.1), 0),
        (_batch(g, policy, 2, 0.4), 4),
        (_batch(g, policy, 5, 0.02), 1),
    ]
