"""Mixtral sparse MoE block: top-2 routing, per-expert token lists from single-argument `torch.where`.

Source: https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/models/mixtral/modeling_mixtral.py
(`MixtralBlockSparseTop2MLP`, `MixtralSparseMoeBlock.forward`).

Breaks: `idx, top_x = torch.where(expert_mask[expert_idx])` (nonzero: dynamic output shape), inside
the loop over experts; the gathers `hidden_states[None, top_x]` and `index_add_` follow on the
data-dependent index lists.

HAND: dense dispatch with the same arithmetic per token: each expert runs on all tokens and its
output is scaled by the token's routing weight for that expert (0 when the expert was not
selected), accumulated over experts in the same order with `index_add_` over all rows.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "moe-where"
GRAD = True


class MixtralBlockSparseTop2MLP(nn.Module):
    def __init__(self, hidden_dim, ffn_dim):
        super().__init__()
        self.w1 = nn.Linear(hidden_dim, ffn_dim, bias=False)
        self.w2 = nn.Linear(ffn_dim, hidden_dim, bias=False)
        self.w3 = nn.Linear(hidden_dim, ffn_dim, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, hidden_states):
        current_hidden_states = self.act_fn(self.w1(hidden_states)) * self.w3(hidden_states)
        current_hidden_states = self.w2(current_hidden_states)
        return current_hidden_states


class MixtralSparseMoeBlock(nn.Module):
    def __init__(self, hidden_dim=8, ffn_dim=16, num_experts=4, top_k=2):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.ffn_dim = ffn_dim
        self.num_experts = num_experts
        self.top_k = top_k
        self.gate = nn.Linear(self.hidden_dim, self.num_experts, bias=False)
        self.experts = nn.ModuleList([MixtralBlockSparseTop2MLP(hidden_dim, ffn_dim) for _ in range(self.num_experts)])
        self.jitter_noise = 0.0

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """ """
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        if self.training and self.jitter_noise > 0:
            hidden_states *= torch.empty_like(hidden_states).uniform_(1.0 - self.jitter_noise, 1.0 + self.jitter_noise)
        hidden_states = hidden_states.view(-1, hidden_dim)
        # router_logits: (batch * sequence_length, n_experts)
        router_logits = self.gate(hidden_states)

        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        # we cast back to the input dtype
        routing_weights = routing_weights.to(hidden_states.dtype)

        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype, device=hidden_states.device
        )

        # One hot encode the selected experts to create an expert mask
        # this will be used to easily index which expert is going to be sollicitated
        expert_mask = torch.nn.functional.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)

        # Loop over all available experts in the model and perform the computation on each expert
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx])

            # Index the correct hidden states and compute the expert hidden state for
            # the current expert. We need to make sure to multiply the output hidden
            # states by `routing_weights` on the corresponding tokens (top-1 and top-2)
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]

            # However `index_add_` only support torch tensors for indexing so we'll use
            # the `top_x` tensor here.
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)
        return final_hidden_states, router_logits


def make():
    torch.manual_seed(0)
    return MixtralSparseMoeBlock()


def inputs():
    g = torch.Generator().manual_seed(2)
    out = []
    for b, s in [(1, 3), (2, 4), (1, 1), (2, 7), (3, 5), (1, 9), (4, 2), (2, 10)]:
        out.append((torch.randn(b, s, 8, generator=g),))
    # identical tokens: two experts get every token, the other two get none
    out.append((torch.randn(1, 1, 8, generator=g).repeat(2, 3, 1),))
    return out
