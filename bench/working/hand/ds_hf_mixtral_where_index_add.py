"""Hand rewrite of ds_hf_mixtral_where_index_add: dense dispatch weighted by each token's routing
weight for the expert (0 when not selected)."""

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
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        if self.training and self.jitter_noise > 0:
            hidden_states *= torch.empty_like(hidden_states).uniform_(1.0 - self.jitter_noise, 1.0 + self.jitter_noise)
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)

        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)

        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype, device=hidden_states.device
        )
        all_rows = torch.arange(batch_size * sequence_length, device=hidden_states.device)
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            # (tokens,) weight of this expert for each token; 0 where it was not selected
            weight = (routing_weights * (selected_experts == expert_idx)).sum(dim=-1, keepdim=True)
            current_hidden_states = expert_layer(hidden_states) * weight
            final_hidden_states.index_add_(0, all_rows, current_hidden_states.to(hidden_states.dtype))
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
    out.append((torch.randn(1, 1, 8, generator=g).repeat(2, 3, 1),))
    return out
