"""Megatron-LM GPT pre-training `loss_func`: masked mean of the per-token losses, and with
`--check-for-nan-in-loss-and-grad` an assert (with the rank, device and host in its message) that the
local loss is not NaN before the data-parallel all-reduce.

Source: https://github.com/NVIDIA/Megatron-LM/blob/core_r0.6.0/pretrain_gpt.py (`loss_func`,
`forward_step`) and megatron/training/utils.py (`average_losses_across_data_parallel_group`); the
process groups are a single process (rank 0, world size 1, no-op all-reduce) and
`torch.cuda.current_device()` is replaced by the CPU device index. The GPT model is a tiny LM
returning per-token cross-entropy, as `GPTModel(..., labels=labels)` does.

Breaks: `assert not loss.isnan(), (f'Rank {global_rank}: ...')` — an assert on a tensor value with a
formatted message.

HAND: the check moves into a `torch.library.custom_op` with an ORDERED effect that raises the same
AssertionError at run time; the op formats the message only when the assert fails (as Python's assert
does), so `os.uname()` is not called on the normal path.
"""

import os
from functools import partial
from types import SimpleNamespace

import torch
from torch import nn

_ARGS = SimpleNamespace(context_parallel_size=1, check_for_nan_in_loss_and_grad=True)


def get_args():
    return _ARGS


class _SingleProcessGroup:
    """torch.distributed on one process: rank 0, world size 1, all_reduce is the identity."""

    @staticmethod
    def get_rank(group=None):
        return 0

    @staticmethod
    def get_world_size(group=None):
        return 1

    @staticmethod
    def all_reduce(tensor, group=None):
        return None


dist = _SingleProcessGroup()


def _current_device():
    return 0


def average_losses_across_data_parallel_group(losses):
    """Reduce a tensor of losses across all GPUs."""
    averaged_losses = torch.cat(
        [loss.clone().detach().view(1) for loss in losses])
    dist.all_reduce(averaged_losses)
    averaged_losses = averaged_losses / dist.get_world_size()

    return averaged_losses


def loss_func(loss_mask: torch.Tensor, output_tensor: torch.Tensor):
    """Loss function.

    Args:
        loss_mask (torch.Tensor): Used to mask out some portions of the loss
        output_tensor (torch.Tensor): The tensor with the losses
    """
    args = get_args()

    losses = output_tensor.float()
    loss_mask = loss_mask.view(-1).float()
    if args.context_parallel_size > 1:
        loss = torch.cat([torch.sum(losses.view(-1) * loss_mask).view(1), loss_mask.sum().view(1)])
        dist.all_reduce(loss)
        loss = loss[0] / loss[1]
    else:
        loss = torch.sum(losses.view(-1) * loss_mask) / loss_mask.sum()

    # Check individual rank losses are not NaN prior to DP all-reduce.
    if args.check_for_nan_in_loss_and_grad:
        global_rank = dist.get_rank()
        assert not loss.isnan(), (
            f'Rank {global_rank}: found NaN in local forward loss calculation. '
            f'Device: {_current_device()}, node: {os.uname()[1]}'
        )

    # Reduce loss for logging.
    averaged_loss = average_losses_across_data_parallel_group([loss])

    return loss * args.context_parallel_size, {'lm loss': averaged_loss[0]}


class TinyGPT(nn.Module):
    def __init__(self, vocab=16, hidden=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(8, hidden)
        self.layer = nn.Linear(hidden, hidden)
        self.output_layer = nn.Linear(hidden, vocab, bias=False)

    def forward(self, tokens, position_ids, attention_mask, labels=None):
        h = self.embedding(tokens) + self.position(position_ids)
        logits = self.output_layer(torch.tanh(self.layer(h)))
        if labels is None:
            return logits
        # [b s] per-token loss, as GPTModel.compute_language_model_loss returns
        return nn.functional.cross_entropy(logits.transpose(1, 2), labels, reduction="none")


class ForwardStep(nn.Module):
    """forward_step's model call followed by the loss function it returns (run back to back)."""

    def __init__(self):
        super().__init__()
        self.model = TinyGPT()

    def forward(self, tokens, labels, loss_mask, position_ids):
        output_tensor = self.model(tokens, position_ids, None, labels=labels)
        return partial(loss_func, loss_mask)(output_tensor)


def make():
    torch.manual_seed(0)
    return ForwardStep()


def inputs():
    g = torch.Generator().manual_seed(0)
    cases = []
    for b, s, eod_masked in [(2, 6, 0), (1, 8, 2), (3, 4, 1), (2, 5, 3), (1, 3, 0), (4, 7, 2), (2, 8, 5), (3, 2, 1)]:
        tokens = torch.randint(0, 16, (b, s), generator=g)
        labels = torch.randint(0, 16, (b, s), generator=g)
        loss_mask = torch.ones(b, s)
        loss_mask[:, s - eod_masked:] = 0.0  # --eod-mask-loss: tokens after the end of document
        position_ids = torch.arange(s).unsqueeze(0).expand(b, s)
        cases.append((tokens, labels, loss_mask, position_ids))
    return cases


def failing_inputs():
    # a micro-batch whose loss mask is all zero: 0/0 = NaN
    tokens = torch.tensor([[3, 4, 5, 6]])
    return [(tokens, tokens.roll(-1, 1), torch.zeros(1, 4), torch.arange(4).unsqueeze(0))]


KIND = "assert-msg"
GRAD = True
