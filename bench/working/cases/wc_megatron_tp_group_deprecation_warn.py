"""Megatron-Core's tensor-parallel MLP: `RowParallelLinear.forward` hands `tp_group=None` to
`linear_with_grad_accumulation_and_async_allreduce`, which resolves it with
`get_tensor_model_parallel_group_if_none`; on rank 0 that shim issues a `DeprecationWarning`
("tp_group is None, using default tp group...") on every forward, and `warnings.warn` is a C builtin
dynamo cannot trace, so every row-parallel linear breaks the compiled graph.

Source: https://github.com/AMD-AGI/Primus/pull/1169 ("stop the tp_group deprecation warning from
breaking compiled graphs"), code from
https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/utils.py
(`get_tensor_model_parallel_group_if_none`) and
https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/tensor_parallel/layers.py
(`linear_with_grad_accumulation_and_async_allreduce`, `ColumnParallelLinear`, `RowParallelLinear`)
and megatron/core/transformer/mlp.py (`MLP`). A one-rank run: `torch.distributed` and
`parallel_state` are stand-ins for an initialised single-process group (rank 0, world size 1), the
autograd Function is its forward (`matmul` + bias), and the tensor-parallel reductions are the
identity they are at world size 1.

Breaks: `warnings.warn(..., DeprecationWarning, stacklevel=2)` inside
`get_tensor_model_parallel_group_if_none`, once per `RowParallelLinear` (two MLP layers here).

HAND: the warning is issued by a `torch.library.custom_op` with an ORDERED effect (anchored to the
layer input), so it still fires once per row-parallel linear per call at run time, with the same
category and text.
"""
import warnings

import torch
import torch.nn.functional as F
from torch import nn

KIND = "warnings"
GRAD = True


class _SingleRankGroup:
    """Stand-in for the tensor-parallel ProcessGroup of a one-rank job."""

    def size(self):
        return 1

    def rank(self):
        return 0


class _Distributed:
    """Stand-in for `torch.distributed` after `init_process_group(world_size=1)`."""

    @staticmethod
    def is_initialized():
        return True

    @staticmethod
    def get_rank():
        return 0


class _ParallelState:
    """Stand-in for `megatron.core.parallel_state`."""

    _TP_GROUP = _SingleRankGroup()
    _EXPERT_TP_GROUP = _SingleRankGroup()

    def get_tensor_model_parallel_group(self, check_initialized=True):
        return self._TP_GROUP

    def get_expert_tensor_parallel_group(self, check_initialized=True):
        return self._EXPERT_TP_GROUP


dist = _Distributed()
parallel_state = _ParallelState()


def get_tensor_model_parallel_group_if_none(tp_group, is_expert=False, check_initialized=True):
    """Issue a deprecation warning if tp_group is None and return the default tp group."""
    if not dist.is_initialized():
        return None

    if tp_group is None:
        if dist.is_initialized() and dist.get_rank() == 0:
            warnings.warn(
                "Warning: tp_group is None, using default tp group. "
                "Passing tp_group will be mandatory soon",
                DeprecationWarning,
                stacklevel=2,
            )
        if is_expert:
            tp_group = parallel_state.get_expert_tensor_parallel_group(check_initialized=check_initialized)
        else:
            tp_group = parallel_state.get_tensor_model_parallel_group(check_initialized=check_initialized)
    return tp_group


def linear_with_grad_accumulation_and_async_allreduce(input, weight, bias, gradient_accumulation_fusion,
                                                      allreduce_dgrad, sequence_parallel, tp_group=None):
    tp_group = get_tensor_model_parallel_group_if_none(tp_group)
    # LinearWithGradAccumulationAndAsyncCommunication.forward, without sequence parallelism
    output = torch.matmul(input, weight.t())
    if bias is not None:
        output = output + bias
    return output


def reduce_from_tensor_model_parallel_region(input_, group):
    if group.size() == 1:
        return input_
    raise NotImplementedError  # all-reduce; unreachable at world size 1


class ColumnParallelLinear(nn.Module):
    def __init__(self, input_size, output_size, bias=True, skip_bias_add=False):
        super().__init__()
        self.tp_group = parallel_state.get_tensor_model_parallel_group()
        world_size = self.tp_group.size()
        self.output_size_per_partition = output_size // world_size
        self.weight = nn.Parameter(torch.empty(self.output_size_per_partition, input_size))
        nn.init.normal_(self.weight, std=0.2)
        self.bias = nn.Parameter(torch.zeros(self.output_size_per_partition)) if bias else None
        self.skip_bias_add = skip_bias_add
        self.sequence_parallel = False
        self.allreduce_dgrad = world_size > 1 and not self.sequence_parallel

    def forward(self, input_):
        bias = self.bias if not self.skip_bias_add else None
        output_parallel = linear_with_grad_accumulation_and_async_allreduce(
            input=input_,
            weight=self.weight,
            bias=bias,
            gradient_accumulation_fusion=False,
            allreduce_dgrad=self.allreduce_dgrad,
            sequence_parallel=False,
            tp_group=self.tp_group,
        )
        output_bias = self.bias if self.skip_bias_add else None
        return output_parallel, output_bias


class RowParallelLinear(nn.Module):
    def __init__(self, input_size, output_size, bias=True, skip_bias_add=False, input_is_parallel=True):
        super().__init__()
        self.tp_group = parallel_state.get_tensor_model_parallel_group()
        world_size = self.tp_group.size()
        self.input_size_per_partition = input_size // world_size
        self.weight = nn.Parameter(torch.empty(output_size, self.input_size_per_partition))
        nn.init.normal_(self.weight, std=0.2)
        self.bias = nn.Parameter(torch.zeros(output_size)) if bias else None
        self.skip_bias_add = skip_bias_add
        self.input_is_parallel = input_is_parallel
        self.sequence_parallel = False

    def forward(self, input_):
        # Set up backprop all-reduce.
        if self.input_is_parallel:
            input_parallel = input_
        else:
            raise NotImplementedError  # scatter_to_tensor_model_parallel_region
        # Matrix multiply.
        allreduce_dgrad = False
        output_parallel = linear_with_grad_accumulation_and_async_allreduce(
            input=input_parallel,
            weight=self.weight,
            bias=None,
            gradient_accumulation_fusion=False,
            allreduce_dgrad=allreduce_dgrad,
            sequence_parallel=False,
            tp_group=None,
        )
        # All-reduce across all the partitions.
        output_ = reduce_from_tensor_model_parallel_region(output_parallel, group=self.tp_group)
        if not self.skip_bias_add:
            output = (output_ + self.bias) if self.bias is not None else output_
            output_bias = None
        else:
            output = output_
            output_bias = self.bias
        return output, output_bias


class MLP(nn.Module):
    def __init__(self, hidden_size, ffn_hidden_size):
        super().__init__()
        self.linear_fc1 = ColumnParallelLinear(hidden_size, ffn_hidden_size, skip_bias_add=True)
        self.linear_fc2 = RowParallelLinear(ffn_hidden_size, hidden_size, skip_bias_add=True)

    def forward(self, hidden_states):
        intermediate_parallel, bias_parallel = self.linear_fc1(hidden_states)
        intermediate_parallel = F.gelu(intermediate_parallel + bias_parallel)
        output, output_bias = self.linear_fc2(intermediate_parallel)
        return output, output_bias


class TwoLayerMLPStack(nn.Module):
    def __init__(self, hidden_size=8, ffn_hidden_size=16):
        super().__init__()
        self.norms = nn.ModuleList([nn.LayerNorm(hidden_size) for _ in range(2)])
        self.mlps = nn.ModuleList([MLP(hidden_size, ffn_hidden_size) for _ in range(2)])

    def forward(self, hidden_states):
        # [s, b, h] as in Megatron
        for norm, mlp in zip(self.norms, self.mlps):
            out, out_bias = mlp(norm(hidden_states))
            hidden_states = hidden_states + out + out_bias
        return hidden_states


def make():
    torch.manual_seed(0)
    return TwoLayerMLPStack()


def inputs():
    torch.manual_seed(0)
    return [(torch.randn(s, b, 8),) for s, b in [(4, 2), (1, 1), (6, 3), (3, 1), (2, 4), (5, 2), (7, 1), (1, 5)]]
