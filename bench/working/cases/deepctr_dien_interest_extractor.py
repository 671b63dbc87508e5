"""DeepCTR-Torch's DIEN interest extractor: drop users with an empty behaviour history (boolean mask
on `keys_length`), return zeros if none is left, run a GRU over the packed histories, and compute
the auxiliary click / no-click loss on the valid time steps.

Source: https://github.com/shenweichen/DeepCTR-Torch/blob/master/deepctr_torch/models/dien.py
(`InterestExtractor.forward`, `InterestExtractor._cal_auxiliary_loss`; `DNN` from
deepctr_torch/layers/core.py reduced to Linear + sigmoid layers).

Breaks: `keys_length[mask]`, `masked_select` and `[mask > 0]` (dynamic shapes), the `shape[0] == 0`
branches, `pack_padded_sequence` (a skipped function) and the nn.GRU run on the packed sequence.

HAND: none — the interests returned have one row per user with a non-empty history (a
data-dependent batch size), and an all-empty batch returns a 1-tuple instead of a pair.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class DNN(nn.Module):
    def __init__(self, inputs_dim, hidden_units, activation='relu', init_std=0.0001):
        super(DNN, self).__init__()
        hidden_units = [inputs_dim] + list(hidden_units)
        self.linears = nn.ModuleList(
            [nn.Linear(hidden_units[i], hidden_units[i + 1]) for i in range(len(hidden_units) - 1)])
        for name, tensor in self.linears.named_parameters():
            if 'weight' in name:
                nn.init.normal_(tensor, mean=0, std=init_std)
        self.activation = activation

    def forward(self, inputs):
        deep_input = inputs
        for i in range(len(self.linears)):
            fc = self.linears[i](deep_input)
            fc = torch.sigmoid(fc) if self.activation == 'sigmoid' else F.relu(fc)
            deep_input = fc
        return deep_input


class InterestExtractor(nn.Module):
    def __init__(self, input_size, use_neg=False, init_std=0.001, device='cpu'):
        super(InterestExtractor, self).__init__()
        self.use_neg = use_neg
        self.gru = nn.GRU(input_size=input_size, hidden_size=input_size, batch_first=True)
        if self.use_neg:
            self.auxiliary_net = DNN(input_size * 2, [8, 4, 1], 'sigmoid', init_std=init_std)
        for name, tensor in self.gru.named_parameters():
            if 'weight' in name:
                nn.init.normal_(tensor, mean=0, std=init_std)
        self.to(device)

    def forward(self, keys, keys_length, neg_keys=None):
        batch_size, max_length, dim = keys.size()
        zero_outputs = torch.zeros(batch_size, dim, device=keys.device)
        aux_loss = torch.zeros((1,), device=keys.device)

        # create zero mask for keys_length, to make sure 'pack_padded_sequence' safe
        mask = keys_length > 0
        masked_keys_length = keys_length[mask]

        # batch_size validation check
        if masked_keys_length.shape[0] == 0:
            return zero_outputs,

        masked_keys = torch.masked_select(keys, mask.view(-1, 1, 1)).view(-1, max_length, dim)

        packed_keys = pack_padded_sequence(masked_keys, lengths=masked_keys_length.cpu(), batch_first=True,
                                           enforce_sorted=False)
        packed_interests, _ = self.gru(packed_keys)
        interests, _ = pad_packed_sequence(packed_interests, batch_first=True, padding_value=0.0,
                                           total_length=max_length)

        if self.use_neg and neg_keys is not None:
            masked_neg_keys = torch.masked_select(neg_keys, mask.view(-1, 1, 1)).view(-1, max_length, dim)
            aux_loss = self._cal_auxiliary_loss(
                interests[:, :-1, :],
                masked_keys[:, 1:, :],
                masked_neg_keys[:, 1:, :],
                masked_keys_length - 1)

        return interests, aux_loss

    def _cal_auxiliary_loss(self, states, click_seq, noclick_seq, keys_length):
        # keys_length >= 1
        mask_shape = keys_length > 0
        keys_length = keys_length[mask_shape]
        if keys_length.shape[0] == 0:
            return torch.zeros((1,), device=states.device)

        _, max_seq_length, embedding_size = states.size()
        states = torch.masked_select(states, mask_shape.view(-1, 1, 1)).view(-1, max_seq_length, embedding_size)
        click_seq = torch.masked_select(click_seq, mask_shape.view(-1, 1, 1)).view(-1, max_seq_length, embedding_size)
        noclick_seq = torch.masked_select(noclick_seq, mask_shape.view(-1, 1, 1)).view(-1, max_seq_length,
                                                                                       embedding_size)
        batch_size = states.size()[0]

        mask = (torch.arange(max_seq_length, device=states.device).repeat(
            batch_size, 1) < keys_length.view(-1, 1)).float()

        click_input = torch.cat([states, click_seq], dim=-1)
        noclick_input = torch.cat([states, noclick_seq], dim=-1)
        embedding_size = embedding_size * 2

        click_p = self.auxiliary_net(click_input.view(
            batch_size * max_seq_length, embedding_size)).view(
            batch_size, max_seq_length)[mask > 0].view(-1, 1)
        click_target = torch.ones(
            click_p.size(), dtype=torch.float, device=click_p.device)

        noclick_p = self.auxiliary_net(noclick_input.view(
            batch_size * max_seq_length, embedding_size)).view(
            batch_size, max_seq_length)[mask > 0].view(-1, 1)
        noclick_target = torch.zeros(
            noclick_p.size(), dtype=torch.float, device=noclick_p.device)

        loss = F.binary_cross_entropy(
            torch.cat([click_p, noclick_p], dim=0),
            torch.cat([click_target, noclick_target], dim=0))

        return loss


def make():
    torch.manual_seed(0)
    return InterestExtractor(input_size=4, use_neg=True, init_std=0.3)


def inputs():
    g = torch.Generator().manual_seed(21)
    calls = []
    for lengths, use_neg in [
        ([3, 5, 2], True),
        ([0, 4, 5], True),       # a cold-start user
        ([0, 0, 0], True),       # nobody has a history
        ([1, 1, 5], True),       # length-1 histories: no auxiliary steps for them
        ([1, 1, 1], True),       # no auxiliary steps at all
        ([5, 5, 5], False),
        ([2, 0, 3], False),
        ([4, 2, 1], True),
    ]:
        keys = torch.randn(3, 5, 4, generator=g)
        neg = torch.randn(3, 5, 4, generator=g) if use_neg else None
        calls.append((keys, torch.tensor(lengths), neg))
    return calls


KIND = "dynamic-shape+skipped-fn"
GRAD = True

