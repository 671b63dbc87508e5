"""MoE dispatch: `.nonzero()` over expert hits, then `torch.where(mask)` per expert inside the loop (GM401)."""
import torch
import torch.nn.functional as F


@torch.compile
def moe_dispatch(hidden, router_logits, experts_w):
    num_experts = experts_w.shape[0]
    top = router_logits.topk(2, dim=-1).indices
    expert_mask = F.one_hot(top, num_experts).permute(2, 1, 0)
    out = torch.zeros_like(hidden)
    expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()  # expect: GM401
    for expert_idx in expert_hit:
        idx, token_idx = torch.where(expert_mask[expert_idx].squeeze(0))  # expect: GM401
        out[token_idx] += hidden[token_idx] @ experts_w[expert_idx].squeeze(0)
    return out


def sample():
    return moe_dispatch, (torch.randn(5, 4), torch.randn(5, 3), torch.randn(3, 4, 4)), {}
