"""RLlib's PPO torch policy loss: for recurrent models the time-padded rows are masked out of every
mean with `reduce_mean_valid` (a boolean-mask gather), and a non-finite KL term only logs a warning.

Source: https://github.com/ray-project/ray/blob/master/rllib/algorithms/ppo/ppo_torch_policy.py
        (PPOTorchPolicy.loss, ray 2.x with `warn_if_infinite_kl_divergence(self, mean_kl_loss)`),
        https://github.com/ray-project/ray/blob/master/rllib/utils/torch_utils.py
        (sequence_mask, explained_variance, warn_if_infinite_kl_divergence),
        https://github.com/ray-project/ray/blob/master/rllib/models/torch/torch_action_dist.py (TorchCategorical).
Reduced: a tiny model (optionally "recurrent": it returns a state when the batch carries one), a
dict in place of SampleBatch, config as a dict.

Breaks: `torch.sum(t[mask])` (boolean-mask indexing, data-dependent shape) in `reduce_mean_valid`;
`if policy.loss_initialized() and kl_divergence.isinf():` (branch on a tensor) around the
logger.warning.

HAND: `reduce_mean_valid` sums `torch.where(mask, t, 0)` (same value and gradient; padded rows get
zero gradient as before); the KL warning moves into a `torch.library.custom_op` with an ORDERED
effect that logs the same record (logger, WARNING, text) at run time when the KL is infinite.
"""
import logging

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)

SMALL_NUMBER = 1e-6
FLOAT_MIN = -3.4e38  # ray.rllib.utils.torch_utils.FLOAT_MIN


class SampleBatch:
    OBS = "obs"
    ACTIONS = "actions"
    ACTION_LOGP = "action_logp"
    ACTION_DIST_INPUTS = "action_dist_inputs"
    SEQ_LENS = "seq_lens"


class Postprocessing:
    ADVANTAGES = "advantages"
    VALUE_TARGETS = "value_targets"


def sequence_mask(lengths, maxlen=None, dtype=None, time_major=False):
    """Offers same behavior as tf.sequence_mask for torch."""
    # If maxlen not given, use the longest lengths in the `lengths` tensor.
    if maxlen is None:
        maxlen = int(lengths.max())

    mask = ~(
        torch.ones((len(lengths), maxlen)).to(lengths.device).cumsum(dim=1).t()
        > lengths
    )
    # Time major transformation.
    if not time_major:
        mask = mask.t()

    # By default, set the mask to be boolean.
    mask.type(dtype or torch.bool)

    return mask


def explained_variance(y, pred):
    y_var = torch.var(y, dim=[0])
    diff_var = torch.var(y - pred, dim=[0])
    min_ = torch.tensor([-1.0]).to(pred.device)
    return torch.max(min_, 1 - (diff_var / (y_var + SMALL_NUMBER)))[0]


def warn_if_infinite_kl_divergence(policy, kl_divergence):
    if policy.loss_initialized() and kl_divergence.isinf():
        logger.warning(
            "KL divergence is non-finite, this will likely destabilize your model and"
            " the training process. Action(s) in a specific state have near-zero"
            " probability. This can happen naturally in deterministic environments"
            " where the optimal policy has zero mass for a specific action. To fix this"
            " issue, consider setting the coefficient for the KL loss term to zero or"
            " increasing policy entropy."
        )


class TorchCategorical:
    """Wrapper class for PyTorch Categorical distribution."""

    def __init__(self, inputs, model=None, temperature=1.0):
        if temperature != 1.0:
            inputs /= temperature
        self.inputs = inputs
        self.model = model
        self.dist = torch.distributions.categorical.Categorical(logits=self.inputs)

    def logp(self, actions):
        return self.dist.log_prob(actions)

    def entropy(self):
        return self.dist.entropy()

    def kl(self, other):
        return torch.distributions.kl.kl_divergence(self.dist, other.dist)


class TinyModel(nn.Module):
    def __init__(self, obs_dim=4, num_actions=3, hidden=8):
        super().__init__()
        self.body = nn.Linear(obs_dim, hidden)
        self.rnn_in = nn.Linear(hidden, hidden)
        self.logits = nn.Linear(hidden, num_actions)
        self.value = nn.Linear(hidden, 1)
        self.tower_stats = {}
        self._features = None

    def is_time_major(self):
        return False

    def forward(self, train_batch):
        h = torch.relu(self.body(train_batch[SampleBatch.OBS]))
        state = []
        if "state_in_0" in train_batch:
            h = torch.relu(self.rnn_in(h) + train_batch["state_in_0"])
            state = [h]
        self._features = h
        logits = self.logits(h)
        if "action_mask" in train_batch:
            # as in RLlib's action-masking example models (rllib/examples/models/action_mask_model.py)
            inf_mask = torch.clamp(torch.log(train_batch["action_mask"]), min=FLOAT_MIN)
            logits = logits + inf_mask
        return logits, state

    def value_function(self):
        return self.value(self._features).squeeze(1)


class PPOTorchPolicy:
    def __init__(self, model, config):
        self.model = model
        self.config = config
        self.kl_coeff = config["kl_coeff"]
        self.entropy_coeff = config["entropy_coeff"]
        self._loss_initialized = True

    def loss_initialized(self):
        return self._loss_initialized

    def loss(self, train_batch):
        model = self.model
        dist_class = TorchCategorical
        logits, state = model(train_batch)
        curr_action_dist = dist_class(logits, model)

        # RNN case: Mask away 0-padded chunks at end of time axis.
        if state:
            B = len(train_batch[SampleBatch.SEQ_LENS])
            max_seq_len = logits.shape[0] // B
            mask = sequence_mask(
                train_batch[SampleBatch.SEQ_LENS],
                max_seq_len,
                time_major=model.is_time_major(),
            )
            mask = torch.reshape(mask, [-1])
            num_valid = torch.sum(mask)

            def reduce_mean_valid(t):
                return torch.sum(t[mask]) / num_valid

        # non-RNN case: No masking.
        else:
            mask = None
            reduce_mean_valid = torch.mean

        prev_action_dist = dist_class(
            train_batch[SampleBatch.ACTION_DIST_INPUTS], model
        )

        logp_ratio = torch.exp(
            curr_action_dist.logp(train_batch[SampleBatch.ACTIONS])
            - train_batch[SampleBatch.ACTION_LOGP]
        )

        # Only calculate kl loss if necessary (kl-coeff > 0.0).
        if self.config["kl_coeff"] > 0.0:
            action_kl = prev_action_dist.kl(curr_action_dist)
            mean_kl_loss = reduce_mean_valid(action_kl)
            warn_if_infinite_kl_divergence(self, mean_kl_loss)
        else:
            mean_kl_loss = torch.tensor(0.0, device=logp_ratio.device)

        curr_entropy = curr_action_dist.entropy()
        mean_entropy = reduce_mean_valid(curr_entropy)

        surrogate_loss = torch.min(
            train_batch[Postprocessing.ADVANTAGES] * logp_ratio,
            train_batch[Postprocessing.ADVANTAGES]
            * torch.clamp(
                logp_ratio, 1 - self.config["clip_param"], 1 + self.config["clip_param"]
            ),
        )
        mean_policy_loss = reduce_mean_valid(-surrogate_loss)

        # Compute a value function loss.
        if self.config["use_critic"]:
            value_fn_out = model.value_function()
            vf_loss = torch.pow(
                value_fn_out - train_batch[Postprocessing.VALUE_TARGETS], 2.0
            )
            vf_loss_clipped = torch.clamp(vf_loss, 0, self.config["vf_clip_param"])
            mean_vf_loss = reduce_mean_valid(vf_loss_clipped)
        # Ignore the value function.
        else:
            value_fn_out = 0
            vf_loss_clipped = mean_vf_loss = 0.0

        total_loss = reduce_mean_valid(
            -surrogate_loss
            + self.config["vf_loss_coeff"] * vf_loss_clipped
            - self.entropy_coeff * curr_entropy
        )

        # Add mean_kl_loss (already processed through `reduce_mean_valid`),
        # if necessary.
        if self.config["kl_coeff"] > 0.0:
            total_loss += self.kl_coeff * mean_kl_loss

        # Store values for stats function in model (tower), such that for
        # multi-GPU, we do not override them during the parallel loss phase.
        model.tower_stats["total_loss"] = total_loss
        model.tower_stats["mean_policy_loss"] = mean_policy_loss
        model.tower_stats["mean_vf_loss"] = mean_vf_loss
        model.tower_stats["vf_explained_var"] = explained_variance(
            train_batch[Postprocessing.VALUE_TARGETS], value_fn_out
        )
        model.tower_stats["mean_entropy"] = mean_entropy
        model.tower_stats["mean_kl_loss"] = mean_kl_loss

        return total_loss


def make():
    torch.manual_seed(0)
    model = TinyModel()
    config = {"kl_coeff": 0.2, "entropy_coeff": 0.01, "clip_param": 0.3,
              "use_critic": True, "vf_clip_param": 10.0, "vf_loss_coeff": 1.0}
    return PPOTorchPolicy(model, config).loss


def _batch(seed, B, T, rnn, obs_scale=1.0, seq_lens=None, masked=False):
    g = torch.Generator().manual_seed(seed)
    n = B * T
    batch = {
        SampleBatch.OBS: torch.randn(n, 4, generator=g) * obs_scale,
        SampleBatch.ACTIONS: torch.randint(0, 3, (n,), generator=g),
        SampleBatch.ACTION_LOGP: -torch.rand(n, generator=g) - 0.5,
        SampleBatch.ACTION_DIST_INPUTS: torch.randn(n, 3, generator=g),
        Postprocessing.ADVANTAGES: torch.randn(n, generator=g),
        Postprocessing.VALUE_TARGETS: torch.randn(n, generator=g),
    }
    if masked:
        # masked actions get probability 0 under the current policy while the behaviour policy
        # (ACTION_DIST_INPUTS) still gives them mass: an infinite KL
        mask = torch.ones(n, 3)
        mask[::2, 2] = 0.0
        batch["action_mask"] = mask
    if rnn:
        batch["state_in_0"] = torch.randn(n, 8, generator=g) * 0.1
        if seq_lens is None:
            seq_lens = torch.randint(1, T + 1, (B,), generator=g)
        batch[SampleBatch.SEQ_LENS] = torch.as_tensor(seq_lens)
    return batch


def inputs():
    return [
        (_batch(0, 2, 4, rnn=False),),
        (_batch(1, 3, 4, rnn=True),),
        (_batch(2, 2, 5, rnn=True, seq_lens=[5, 5]),),    # no padding
        (_batch(3, 4, 3, rnn=True, seq_lens=[1, 3, 2, 1]),),
        (_batch(4, 2, 4, rnn=False, masked=True),),       # masked actions: infinite KL
        (_batch(5, 2, 4, rnn=True, masked=True, seq_lens=[4, 2]),),  # infinite KL, padded rows
        (_batch(6, 1, 6, rnn=True, seq_lens=[3]),),
        (_batch(7, 3, 2, rnn=False),),
        (_batch(8, 2, 3, rnn=True, masked=True, seq_lens=[1, 1]),),
    ]


KIND = "dynamic-shape+logging"
GRAD = True
