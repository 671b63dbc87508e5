"""Hand rewrite of cases/ww_deepspeed_top1gating_capacity.py.

DeepSpeed MoE TopKGate (k=1): top1gating, the GShard/Switch top-1 router with expert capacity,
random token selection and Gumbel noise.

Source: https://github.com/microsoft/DeepSpeed/blob/38327e07f6cd39b63418f60cedd1651b0be3e7c3/deepspeed/moe/sharded_moe.py
        (gumbel_rsample, einsum, _capacity, _top_idx, _one_hot_to_float, top1gating,
        TopKGate.forward)
Kept as in the source, including the @torch.jit.script helpers; reduced: the `not drop_tokens`
branch (needs deepspeed.comm / groups), the Tutel paths, the wall-clock timers and the
multiplicative jitter are left out (the gate is built with drop_tokens=True,
noisy_gate_policy='RSample', use_tutel=False).

Breaks: the capacity is computed as a tensor: `_capacity(gates, torch.tensor(capacity_factor),
torch.tensor(min_capacity))` runs `if capacity < min_capacity:` on 0-d tensors (dynamo:
"Data-dependent branching"), and that tensor is then passed as topk's k (`_top_idx`) and one_hot's
num_classes (`_one_hot_to_float`), which need Python ints. On the first call, the `gumbel_map` /
`exp_selection_uniform_map` caches store `Gumbel(zero, one).rsample` / `Uniform(...).rsample`,
bound methods of objects created inside the traced call, in module-level dicts; dynamo cannot
reconstruct them ("Reconstruction failure", reported at the gumbel cache line and at
top1gating's return), so the rest of the frame runs eagerly.

HAND: the Gumbel / Uniform samplers that top1gating caches in module-level dicts on its first call
(a bound method of a distribution created inside the traced call cannot be reconstructed by
dynamo: "Reconstruction failure") are built in TopKGate.__init__ for the gate's device, and the
capacity depends only on shapes and Python numbers, so it is computed as a Python int with
the same float32 arithmetic as the scripted helper
(`ceil(float32(num_tokens / num_experts) * float32(capacity_factor))`, then the min_capacity
floor), and topk / one_hot are called with it directly (the scripted helpers type k /
num_classes as Tensor, so they are inlined). Everything else, including the RNG draws, is
unchanged.
"""

from typing import Callable, Dict, Optional, Tuple

import numpy as np

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Module

uniform_map: Dict[torch.device, Callable] = {}
gumbel_map: Dict[torch.device, Callable] = {}
exp_selection_uniform_map: Dict[torch.device, Callable] = {}


def gumbel_rsample(shape: Tuple, device: torch.device) -> Tensor:
    gumbel = gumbel_map.get(device)
    if gumbel is None:
        one = torch.tensor(1.0, device=device)
        zero = torch.tensor(0.0, device=device)
        gumbel = torch.distributions.gumbel.Gumbel(zero, one).rsample  # type: ignore
        gumbel_map[device] = gumbel
    return gumbel(shape)


# einsum rewrites are on par or more performant
# switch can be bubbled up in future
USE_EINSUM = True


# einsum dimensions: (g)roup, (s)equence, (e)xpert, (m)odel, (c)apacity
# See https://arxiv.org/pdf/2006.16668.pdf for details.
def einsum(rule, a, b):
    if USE_EINSUM:
        return torch.einsum(rule, a, b)
    elif rule == 's,se->se':
        return a.reshape(a.shape[0], -1) * b
    elif rule == 'se,sc->sec':
        return a.unsqueeze(2) * b.unsqueeze(1)
    else:
        return torch.einsum(rule, a, b)


# The following functions are extracted and scripted
# because otherwise during a torch.jit.trace, the non-Tensor
# values used in the calculations get recorded as constants.
# torch.jit.script coerces them into Tensors and preserves
# their dynamic shapes. This enables ONNX export.
# We can't script the entire top1gating function because it
# includes stateful caching logic which is incompatible with ONNX.


@torch.jit.script
def _capacity(gates: Tensor, capacity_factor: Tensor, min_capacity: Tensor) -> Tensor:
    # gates has shape of SE
    num_tokens = gates.shape[0]
    num_experts = gates.shape[1]
    # to(torch.int64) works around a bug in torch.onnx.export:
    # it should cast k to int64 when converting torch.topk but it doesn't.
    capacity = torch.ceil((num_tokens / num_experts) * capacity_factor).to(torch.int64)
    if capacity < min_capacity:
        capacity = min_capacity.to(torch.int64)
    return capacity


@torch.jit.script
def _top_idx(source, k):
    return torch.topk(source, k=k, dim=0)[1]


@torch.jit.script
def _one_hot_to_float(x, num_classes):
    return F.one_hot(x, num_classes=num_classes).float()


def _capacity_int(num_tokens: int, num_experts: int, capacity_factor: float, min_capacity: int) -> int:
    # the same float32 product as `(num_tokens / num_experts) * torch.tensor(capacity_factor)`
    capacity = int(np.ceil(np.float32(num_tokens / num_experts) * np.float32(capacity_factor)))
    if capacity < min_capacity:
        capacity = min_capacity
    return capacity


def top1gating(logits: Tensor,
               capacity_factor: float,
               min_capacity: int,
               used_token: Tensor = None,
               noisy_gate_policy: Optional[str] = None,
               drop_tokens: bool = True,
               use_rts: bool = True,
               ep_group=None,
               use_tutel: bool = False) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Implements Top1Gating on logits."""
    if noisy_gate_policy == 'RSample':
        logits_w_noise = logits + gumbel_rsample(logits.shape, device=logits.device)
    # everything is in fp32 in this function
    gates = F.softmax(logits, dim=1)

    capacity = _capacity_int(gates.shape[0], gates.shape[1], capacity_factor, min_capacity)

    # Create a mask for 1st's expert per token
    # noisy gating
    indices1_s = torch.argmax(logits_w_noise if noisy_gate_policy == 'RSample' else gates, dim=1)
    num_experts = int(gates.shape[1])
    mask1 = F.one_hot(indices1_s, num_classes=num_experts)

    # mask only used tokens
    if used_token is not None:
        mask1 = einsum("s,se->se", used_token, mask1)

    # gating decisions
    exp_counts = torch.sum(mask1, dim=0).detach().to(logits.device)

    # Compute l_aux
    me = torch.mean(gates, dim=0)
    ce = torch.mean(mask1.float(), dim=0)
    l_aux = torch.sum(me * ce) * num_experts

    # Random Token Selection
    if use_rts:
        uniform = exp_selection_uniform_map.get(logits.device)
        if uniform is None:
            uniform = torch.distributions.uniform.Uniform(low=torch.tensor(0.0, device=logits.device),
                                                          high=torch.tensor(1.0, device=logits.device)).rsample
            exp_selection_uniform_map[logits.device] = uniform

        mask1_rand = mask1 * uniform(mask1.shape)
    else:
        mask1_rand = mask1

    assert logits.shape[
        0] >= min_capacity, "No. of tokens (batch-size) should be greater than min_capacity. Either set min_capacity to 0 or increase your batch size."

    top_idx = torch.topk(mask1_rand, k=capacity, dim=0)[1]

    new_mask1 = mask1 * torch.zeros_like(mask1).scatter_(0, top_idx, 1)
    mask1 = new_mask1

    # Compute locations in capacity buffer
    locations1 = torch.cumsum(mask1, dim=0) - 1

    # Store the capacity location for each token
    locations1_s = torch.sum(locations1 * mask1, dim=1)

    # Normalize gate probabilities
    mask1_float = mask1.float()
    gates = gates * mask1_float

    locations1_sc = F.one_hot(locations1_s, num_classes=capacity).float()
    combine_weights = einsum("se,sc->sec", gates, locations1_sc)

    dispatch_mask = combine_weights.bool()

    return l_aux, combine_weights, dispatch_mask, exp_counts


class TopKGate(Module):
    wg: torch.nn.Linear

    def __init__(self,
                 model_dim: int,
                 num_experts: int,
                 k: int = 1,
                 capacity_factor: float = 1.0,
                 eval_capacity_factor: float = 1.0,
                 min_capacity: int = 8,
                 noisy_gate_policy: Optional[str] = None,
                 drop_tokens: bool = True,
                 use_rts: bool = True) -> None:
        super().__init__()

        # Only top-1 is kept in this reduction.
        if k != 1:
            raise ValueError('Only top-1 gating is kept here.')
        self.wg = torch.nn.Linear(model_dim, num_experts, bias=False).float()
        # Build the module-level cached samplers for the gate's device here, at construction,
        # instead of inside the first (compiled) forward; building them draws no random numbers.
        device = self.wg.weight.device
        if gumbel_map.get(device) is None:
            gumbel_map[device] = torch.distributions.gumbel.Gumbel(
                torch.tensor(0.0, device=device), torch.tensor(1.0, device=device)).rsample
        if exp_selection_uniform_map.get(device) is None:
            exp_selection_uniform_map[device] = torch.distributions.uniform.Uniform(
                low=torch.tensor(0.0, device=device), high=torch.tensor(1.0, device=device)).rsample
        self.k = k
        self.capacity_factor = capacity_factor
        self.eval_capacity_factor = eval_capacity_factor
        self.min_capacity = min_capacity
        self.noisy_gate_policy = noisy_gate_policy
        self.drop_tokens = drop_tokens
        self.use_rts = use_rts

    def forward(self, input: torch.Tensor, used_token: torch.Tensor = None, use_tutel: bool = False):
        if self.wg.weight.dtype != torch.float32:
            self.wg = self.wg.float()
        input_fp32 = input.float()
        logits = self.wg(input_fp32)

        gate_output = top1gating(logits, self.capacity_factor if self.training else self.eval_capacity_factor,
                                 self.min_capacity, used_token, self.noisy_gate_policy if self.training else None,
                                 self.drop_tokens, self.use_rts, None, use_tutel)

        return gate_output


KIND = "tensor capacity used as int (jit.script helpers)"
GRAD = True


def make():
    torch.manual_seed(0)
    return TopKGate(model_dim=8, num_experts=4, k=1, capacity_factor=1.25, min_capacity=4, noisy_gate_policy='RSample')


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for s in (8, 12, 16, 20, 24, 10, 32):
        out.append((torch.randn(s, 8, generator=g),))
    # capacity 1.25 * 16 / 4 = 5 > min_capacity; with used_token masking some tokens out
    used = (torch.rand(16, generator=g) > 0.25).long()
    out.append((torch.randn(16, 8, generator=g), used))
    # skewed router input: most tokens pick the same expert, the capacity drops the overflow
    x = torch.randn(24, 8, generator=g) + 3.0 * torch.randn(1, 8, generator=g)
    out.append((x,))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(3, 8, generator=g),)]  # fewer tokens than min_capacity
