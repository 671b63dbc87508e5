"""HiDream's MoE feed-forward at inference (DeepSeek-style `moe_infer`): token-expert pairs are
sorted by expert, the per-expert counts come from `bincount().cpu().numpy().cumsum(0)`, and a
Python loop over the NumPy cumsum slices each expert's tokens, runs the expert and scatter-adds
its weighted output back; a shared expert is added.

Source: https://github.com/huggingface/diffusers/pull/11477 ("[torch.compile] Make HiDream
torch.compile ready": the review thread is on `moe_infer`), code at
https://github.com/huggingface/diffusers/blob/main/src/diffusers/models/transformers/transformer_hidream_image.py
(`MoEGate`, `MOEFeedForwardSwiGLU`, itself "Modified from" DeepSeek-V3's inference model).
Reduced: tiny dims, 4 routed experts, top-2, eval mode (the `moe_infer` branch).

Breaks: `flat_expert_indices.bincount()` (dynamic output shape) in `moe_infer`, and in the resumed
code `if start_idx == end_idx:` (the NumPy cumsum is traced as a tensor, so the test is a
data-dependent branch; the frame is then skipped).

HAND: every expert runs on every token and its output is weighted by that token's routing weight
for the expert (zero when the expert was not picked), summed in expert order — the same sum
`scatter_reduce_(..., reduce="sum")` builds; kept under `torch.no_grad()` like `moe_infer`.
"""
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
        idxs = flat_expert_indices.argsort()
        tokens_per_expert = flat_expert_indices.bincount().cpu().numpy().cumsum(0)
        token_idxs = idxs // self.num_activated_experts
        for i, end_idx in enumerate(tokens_per_expert):
            start_idx = 0 if i == 0 else tokens_per_expert[i - 1]
            if start_idx == end_idx:
                continue
            expert = self.experts[i]
            exp_token_idx = token_idxs[start_idx:end_idx]
            expert_tokens = x[exp_token_idx]
            expert_out = expert(expert_tokens)
            expert_out.mul_(flat_expert_weights[idxs[start_idx:end_idx]])

            # for fp16 and other dtype
            expert_cache = expert_cache.to(expert_out.dtype)
            expert_cache.scatter_reduce_(0, exp_token_idx.view(-1, 1).repeat(1, x.shape[-1]), expert_out, reduce="sum")
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
