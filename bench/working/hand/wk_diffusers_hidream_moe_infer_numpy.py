"""Hand rewrite of cases/wk_diffusers_hidream_moe_infer_numpy.py: `moe_infer` runs every expert on
every token and weights its output by the token's routing weight for that expert (zero when not
routed), summing in expert order — the sum the sorted/scatter version builds."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "bincount-numpy-loop"
GRAD = True


class FeedForwardSwiGLU(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoEGate(nn.Module):
    def __init__(self, embed_dim, num_routed_experts=4, num_activated_experts=2):
        super().__init__()
        self.top_k = num_activated_experts
        self.n_routed_experts = num_routed_experts
        self.weight = nn.Parameter(torch.empty((self.n_routed_experts, embed_dim)))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))

    def forward(self, hidden_states):
        bsz, seq_len, h = hidden_states.shape
        hidden_states = hidden_states.view(-1, h)
        logits = F.linear(hidden_states, self.weight, None)
        scores = logits.softmax(dim=-1)
        topk_weight, topk_idx = torch.topk(scores, k=self.top_k, dim=-1, sorted=False)
        return topk_idx, topk_weight, None


class MOEFeedForwardSwiGLU(nn.Module):
    def __init__(self, dim=8, hidden_dim=16, num_routed_experts=4, num_activated_experts=2):
        super().__init__()
        self.shared_experts = FeedForwardSwiGLU(dim, hidden_dim // 2)
        self.experts = nn.ModuleList([FeedForwardSwiGLU(dim, hidden_dim) for i in range(num_routed_experts)])
        self.gate = MoEGate(dim, num_routed_experts, num_activated_experts)
        self.num_activated_experts = num_activated_experts

    def forward(self, x):
        identity = x
        orig_shape = x.shape
        topk_idx, topk_weight, aux_loss = self.gate(x)
        x = x.view(-1, x.shape[-1])
        flat_topk_idx = topk_idx.view(-1)
        y = self.moe_infer(x, flat_topk_idx, topk_weight.view(-1, 1)).view(*orig_shape)
        y = y + self.shared_experts(identity)
        return y

    @torch.no_grad()
    def moe_infer(self, x, flat_expert_indices, flat_expert_weights):
        expert_cache = torch.zeros_like(x)
        k = self.num_activated_experts
        idx = flat_expert_indices.view(-1, k)
        w = flat_expert_weights.view(-1, k)
        for i, expert in enumerate(self.experts):
            weight_i = (w * (idx == i).to(w.dtype)).sum(dim=1, keepdim=True)
            expert_cache = expert_cache + expert(x) * weight_i
        return expert_cache


def make():
    torch.manual_seed(0)
    return MOEFeedForwardSwiGLU().eval()


def inputs():
    g = torch.Generator().manual_seed(4)
    return [
        (torch.randn(1, 3, 8, generator=g),),
        (torch.randn(2, 4, 8, generator=g),),
        (torch.randn(1, 1, 8, generator=g),),
        (torch.randn(2, 5, 8, generator=g) * 3,),
        (torch.zeros(1, 2, 8),),
        (torch.randn(3, 2, 8, generator=g),),
        (torch.ones(1, 4, 8),),
        (torch.randn(1, 6, 8, generator=g) - 1,),
    ]
