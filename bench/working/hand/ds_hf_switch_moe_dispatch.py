"""Hand rewrite of ds_hf_switch_moe_dispatch: every expert runs on all tokens and `torch.where`
keeps each token's own expert output (tokens over capacity keep their input)."""

import torch
import torch.nn as nn

KIND = "moe-mask"
GRAD = True


class DenseActDense(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.wi = nn.Linear(d_model, d_ff, bias=False)
        self.wo = nn.Linear(d_ff, d_model, bias=False)
        self.act = nn.ReLU()

    def forward(self, hidden_states):
        hidden_states = self.wi(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.wo(hidden_states)
        return hidden_states


class Top1Router(nn.Module):
    def __init__(self, d_model, num_experts, expert_capacity):
        super().__init__()
        self.num_experts = num_experts
        self.expert_capacity = expert_capacity
        self.classifier = nn.Linear(d_model, num_experts, bias=False)
        self.dtype = torch.float32

    def _compute_router_probabilities(self, hidden_states):
        self.input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(self.dtype)
        router_logits = self.classifier(hidden_states)
        router_probabilities = nn.functional.softmax(router_logits, dim=-1, dtype=self.dtype).to(self.input_dtype)
        return router_probabilities, router_logits

    def forward(self, hidden_states):
        router_probs, router_logits = self._compute_router_probabilities(hidden_states)
        expert_index = torch.argmax(router_probs, dim=-1)
        expert_index = torch.nn.functional.one_hot(expert_index, num_classes=self.num_experts)
        token_priority = torch.cumsum(expert_index, dim=-2)
        expert_capacity_mask = token_priority <= self.expert_capacity
        expert_index = expert_index * expert_capacity_mask
        router_probs = torch.max(router_probs, dim=-1).values.unsqueeze(-1)
        return expert_index, router_probs, router_logits


class SwitchTransformersSparseMLP(nn.Module):
    def __init__(self, d_model=8, d_ff=16, num_experts=4, expert_capacity=3):
        super().__init__()
        self.router = Top1Router(d_model, num_experts, expert_capacity)
        self.experts = nn.ModuleDict()
        for idx in range(num_experts):
            self.experts[f"expert_{idx}"] = DenseActDense(d_model, d_ff)

    def forward(self, hidden_states):
        router_mask, router_probs, router_logits = self.router(hidden_states)
        expert_index = torch.argmax(router_mask, dim=-1)
        next_states = hidden_states.clone()
        for idx, expert in enumerate(self.experts.values()):
            token_indices = router_mask[:, :, idx].bool()
            next_states = torch.where(token_indices[..., None], expert(hidden_states).to(next_states.dtype), next_states)
        hidden_states = router_probs * next_states
        return hidden_states, (router_logits, expert_index)


def make():
    torch.manual_seed(0)
    return SwitchTransformersSparseMLP()


def inputs():
    g = torch.Generator().manual_seed(1)
    out = []
    for b, s in [(1, 4), (2, 5), (2, 8), (1, 1), (3, 6), (2, 12), (1, 7), (4, 3)]:
        out.append((torch.randn(b, s, 8, generator=g),))
    x = torch.randn(1, 1, 8, generator=g).repeat(2, 6, 1)
    out.append((x,))
    return out
