"""Hand rewrite of cases/wo_trtllm_dsv3_routing_nan_warn.py: the debug NaN test and its warning run
inside a `torch.library.custom_op` with an ORDERED effect."""
import warnings
from typing import Dict, List, Optional

import torch
import torch.nn.functional as F
from torch import nn
from torch._library.effects import EffectType

KIND = "branch-warnings"


def enable_llm_debug() -> bool:
    # TLLM_LLM_ENABLE_DEBUG=1
    return True


_NS = "wo_trtllm_dsv3"
if not hasattr(getattr(torch.ops, _NS), "warn_nan"):

    @torch.library.custom_op(f"{_NS}::warn_nan", mutates_args=())
    def _warn_nan(scores_with_bias: torch.Tensor) -> None:
        has_nan = torch.isnan(scores_with_bias).any()
        if has_nan:
            warnings.warn(
                "Detected NAN in the tensor scores_with_bias. Please check if it matches the expectation."
            )

    @_warn_nan.register_fake
    def _(scores_with_bias):
        return None

    _warn_nan.register_effect(EffectType.ORDERED)


class Deepseekv3RoutingImpl:

    def __init__(
            self,
            top_k: int,
            n_group: int,
            topk_group: int,
            routed_scaling_factor: float,
            is_fused: bool = True,  # fuse_routing_kernel
    ):
        super().__init__()
        self.top_k = top_k
        self.topk_group = topk_group
        self.n_group = n_group
        self.routed_scaling_factor = routed_scaling_factor
        self.is_fused = is_fused

    @staticmethod
    def get_scores(logits, e_score_correction_bias):
        scores = F.sigmoid(logits)
        scores_with_bias = scores + e_score_correction_bias
        if enable_llm_debug():
            torch.ops.wo_trtllm_dsv3.warn_nan(scores_with_bias)

        return scores, scores_with_bias

    def noaux_tc(self, logits, e_score_correction_bias):
        n_group = self.n_group

        _, num_experts = logits.shape
        if self.n_group > 1:
            experts_per_group = num_experts // n_group
            if (self.top_k > 8 or num_experts > 256 or experts_per_group > 32
                    or experts_per_group * self.topk_group > 256):
                if self.is_fused:
                    warnings.warn(
                        "The configuration is not supported by the fused routing kernel. We have to use the original pytorch implementation."
                    )
                self.is_fused = False
        elif num_experts > 1024 or self.top_k > 32:
            if self.is_fused:
                warnings.warn(
                    "The configuration is not supported by the fused routing kernel. We have to use the original pytorch implementation."
                )
            self.is_fused = False

        if not self.is_fused:
            # Short path for n_group == 1 and topk_group == 1.
            if self.n_group == 1 and self.topk_group == 1:
                scores, scores_with_bias = self.get_scores(
                    logits, e_score_correction_bias)
                _, topk_indices = torch.topk(scores_with_bias,
                                             k=self.top_k,
                                             dim=1)
                topk_values = torch.gather(scores, dim=1,
                                           index=topk_indices).type_as(scores)

                # Normalize and scale.
                topk_values_sum = torch.sum(topk_values, dim=-1,
                                            keepdim=True) + 1e-20
                topk_values = topk_values / topk_values_sum * self.routed_scaling_factor
                return topk_values, topk_indices

            # General case with pytorch implementation.
            scores, scores_with_bias = self.get_scores(logits,
                                                       e_score_correction_bias)
            scores_shape = list(scores_with_bias.shape)
            group_scores = torch.sum(torch.topk(
                scores_with_bias.view(scores_shape[:-1] +
                                      [n_group, scores_shape[-1] // n_group]),
                k=2,
                dim=-1,
                largest=True,
                sorted=True)[0],
                                     dim=-1)
            _, group_idx = torch.topk(group_scores,
                                      k=self.topk_group,
                                      dim=-1,
                                      largest=True,
                                      sorted=True)
            group_mask = torch.zeros_like(group_scores)
            group_mask.scatter_(-1, group_idx, 1)
            score_mask = group_mask.unsqueeze(-1).expand(
                scores_shape[:-1] +
                [n_group, scores_shape[-1] // n_group]).reshape(scores_shape)
            scores_with_bias = torch.where(
                score_mask.bool(), scores_with_bias,
                torch.tensor(float('-inf'),
                             dtype=scores_with_bias.dtype,
                             device=scores_with_bias.device))
            _, topk_idx = torch.topk(scores_with_bias,
                                     k=self.top_k,
                                     dim=-1,
                                     largest=True,
                                     sorted=True)
            new_mask = torch.zeros_like(scores)
            new_mask.scatter_(-1, topk_idx, 1)
            scores = scores * new_mask
            score_sum = torch.sum(scores, dim=-1, keepdim=True) + 1e-20
            scores = scores / score_sum * self.routed_scaling_factor
            topk_values, topk_indices = torch.topk(scores,
                                                   k=self.top_k,
                                                   dim=-1,
                                                   largest=True)
            return topk_values, topk_indices
        else:
            raise NotImplementedError("trtllm.noaux_tc_op")

    def apply(
        self, logits: torch.Tensor, e_score_correction_bias: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        topk_values, topk_indices = self.noaux_tc(logits,
                                                  e_score_correction_bias)
        return topk_indices.to(torch.int32), topk_values.to(torch.float32)


class DeepseekV3Gate(nn.Module):

    def __init__(
        self,
        hidden_size: int,
        num_experts: int,
        top_k: int,
        n_group: int,
        topk_group: int,
        routed_scaling_factor: float,
        dtype: Optional[torch.dtype] = None,
        fuse_routing_kernel: bool = True,
    ):
        super().__init__()
        self.weight = nn.Parameter(torch.randn((num_experts, hidden_size),
                                               dtype=dtype),
                                   requires_grad=False)
        self.e_score_correction_bias = nn.Parameter(0.1 * torch.randn(
            (num_experts), dtype=torch.float32),
                                                    requires_grad=False)
        self.routing_impl = Deepseekv3RoutingImpl(
            top_k=top_k,
            n_group=n_group,
            topk_group=topk_group,
            routed_scaling_factor=routed_scaling_factor,
            is_fused=fuse_routing_kernel)

    def forward(self, hidden_states: torch.Tensor):
        logits = (hidden_states @ self.weight.t()).float()
        # topk routing
        return self.routing_impl.apply(logits, self.e_score_correction_bias)


def make():
    torch.manual_seed(0)
    return DeepseekV3Gate(8, 16, top_k=3, n_group=4, topk_group=2, routed_scaling_factor=2.5,
                          fuse_routing_kernel=False)


def inputs():
    g = torch.Generator().manual_seed(6)
    h = lambda n: torch.randn(n, 8, generator=g)
    nan_row = h(3)
    nan_row[1, 4] = float("nan")  # one token's hidden state is NaN: its 16 logits are NaN
    all_nan = torch.full((2, 8), float("nan"))
    inf_tok = h(2)
    inf_tok[0, 0] = float("inf")  # +-inf logits saturate the sigmoid, no NaN
    return [
        (h(4),),
        (nan_row,),
        (h(1),),
        (inf_tok,),
        (all_nan,),
        (h(6),),
        (h(2) * 100.0,),                # large logits
        (h(5),),
    ]
