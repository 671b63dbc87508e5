"""sb3-contrib RecurrentPPO: RecurrentActorCriticPolicy._process_sequence, the LSTM step of the
recurrent policy's forward / evaluate_actions (episode starts reset the LSTM state).

Source: https://github.com/Stable-Baselines-Team/stable-baselines3-contrib/blob/master/sb3_contrib/common/recurrent/policies.py
        https://github.com/DLR-RM/stable-baselines3/blob/master/stable_baselines3/common/utils.py (zip_strict)
Breaks: dynamo does not trace nn.LSTM (torch._dynamo.config.allow_rnn is False): each `lstm(...)` call
("Attempted to wrap RNN, GRU, or LSTM") skips the frame; behind it, `if th.all(episode_starts == 0.0):` is a
data-dependent branch on a tensor (reported once the LSTM calls are traceable).
HAND: none — the sites are the nn.LSTM calls; a tried rewrite with the LSTM equations on the module's own
weights still breaks (dynamo rejects any access to an nn.LSTM's weights with the same "Attempted to wrap
RNN" reason), and holding the weights elsewhere would change the state_dict. The `th.all` fast path alone
cannot be dropped either: it decides whether episode_starts gets a gradient (None on the fast path).
"""
from itertools import zip_longest
from typing import Iterable, Tuple

import torch as th
from torch import nn

KIND = "nn.LSTM + data-dependent branch"
GRAD = True


def zip_strict(*iterables: Iterable) -> Iterable:
    sentinel = object()
    for combo in zip_longest(*iterables, fillvalue=sentinel):
        if sentinel in combo:
            raise ValueError("Iterables have different lengths")
        yield combo


class RecurrentPolicyCore(nn.Module):
    def __init__(self, features_dim=6, lstm_hidden_size=8):
        super().__init__()
        self.features_extractor = nn.Linear(5, features_dim)
        self.lstm_actor = nn.LSTM(features_dim, lstm_hidden_size, num_layers=1)
        self.action_net = nn.Linear(lstm_hidden_size, 3)

    @staticmethod
    def _process_sequence(
        features: th.Tensor,
        lstm_states: Tuple[th.Tensor, th.Tensor],
        episode_starts: th.Tensor,
        lstm: nn.LSTM,
    ) -> Tuple[th.Tensor, th.Tensor]:
        # LSTM logic
        # (sequence length, batch size, features dim)
        # (batch size = n_envs for data collection or n_seq when doing gradient update)
        n_seq = lstm_states[0].shape[1]
        # Batch to sequence
        # (padded batch size, features_dim) -> (n_seq, max length, features_dim) -> (max length, n_seq, features_dim)
        # note: max length (max sequence length) is always 1 during data collection
        features_sequence = features.reshape((n_seq, -1, lstm.input_size)).swapaxes(0, 1)
        episode_starts = episode_starts.reshape((n_seq, -1)).swapaxes(0, 1)

        # If we don't have to reset the state in the middle of a sequence
        # we can avoid the for loop, which speeds up things
        if th.all(episode_starts == 0.0):
            lstm_output, lstm_states = lstm(features_sequence, lstm_states)
            lstm_output = th.flatten(lstm_output.transpose(0, 1), start_dim=0, end_dim=1)
            return lstm_output, lstm_states

        lstm_output = []
        # Iterate over the sequence
        for features, episode_start in zip_strict(features_sequence, episode_starts):
            hidden, lstm_states = lstm(
                features.unsqueeze(dim=0),
                (
                    # Reset the states at the beginning of a new episode
                    (1.0 - episode_start).view(1, n_seq, 1) * lstm_states[0],
                    (1.0 - episode_start).view(1, n_seq, 1) * lstm_states[1],
                ),
            )
            lstm_output += [hidden]
        # Sequence to batch
        # (sequence length, n_seq, lstm_out_dim) -> (batch_size, lstm_out_dim)
        lstm_output = th.flatten(th.cat(lstm_output).transpose(0, 1), start_dim=0, end_dim=1)
        return lstm_output, lstm_states

    def forward(self, obs, h, c, episode_starts):
        features = self.features_extractor(obs)
        latent_pi, lstm_states_pi = self._process_sequence(features, (h, c), episode_starts, self.lstm_actor)
        return self.action_net(latent_pi), lstm_states_pi[0], lstm_states_pi[1]


def make():
    th.manual_seed(0)
    return RecurrentPolicyCore()


def inputs():
    g = th.Generator().manual_seed(0)
    out = []
    # (n_seq, seq_len, pattern): pattern 0 = no starts, 1 = random starts, 2 = all starts
    for n_seq, seq_len, pat in [(2, 4, 0), (2, 4, 1), (3, 1, 0), (3, 1, 2), (1, 5, 1), (2, 3, 0), (4, 2, 1), (2, 4, 2)]:
        obs = th.randn(n_seq * seq_len, 5, generator=g, requires_grad=True)
        h = th.randn(1, n_seq, 8, generator=g)
        c = th.randn(1, n_seq, 8, generator=g)
        if pat == 0:
            starts = th.zeros(n_seq * seq_len)
        elif pat == 2:
            starts = th.ones(n_seq * seq_len)
        else:
            starts = (th.rand(n_seq * seq_len, generator=g) < 0.4).float()
            starts[1] = 1.0
        out.append((obs, h, c, starts))
    return out
