"""Reformer's attention-seed trick: before the attention sublayer runs, a fresh seed is drawn from
the default generator and the global RNG is re-seeded with it, so that the dropout can be replayed
in the reversible backward pass.

Source: https://github.com/pytorch/pytorch/issues/101154 ("[Dynamo] TB hf_Reformer graph breaks",
repro `MyModel._init_attention_seed`: `self.attention_seed = int(torch.seed() % sys.maxsize)`;
`torch.manual_seed(self.attention_seed)`), modelled on
https://github.com/huggingface/transformers/blob/main/src/transformers/models/reformer/modeling_reformer.py
(`ReformerLayer._init_attention_seed`). The module is in eval mode here so that its outputs do not
depend on the non-deterministic seed; the re-seeding still happens on every call.

Breaks: `torch.seed()` (a function dynamo skips); the rest of `_init_attention_seed`, including
`torch.manual_seed(...)` (which breaks on its own too), then runs outside the graph.

HAND: none — the call must re-seed the process-wide generator with a non-deterministic seed and
keep that seed as a Python int on the module; neither can happen inside a graph.
"""
import sys

import torch
import torch.nn as nn

KIND = "rng-seed"
GRAD = True


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(5, 5)
        self.dropout = torch.nn.Dropout()
        self.attention_seed = None

    def _init_attention_seed(self):
        """
        This function sets a new seed for the attention layer to make dropout deterministic for both forward calls: 1
        normal forward call and 1 forward call in backward to recalculate activations.
        """
        # randomize seeds
        # use cuda generator if available
        if hasattr(torch.cuda, "default_generators") and len(torch.cuda.default_generators) > 0:
            # GPU
            device_idx = torch.cuda.current_device()
            self.attention_seed = torch.cuda.default_generators[device_idx].seed()
        else:
            # CPU
            self.attention_seed = int(torch.seed() % sys.maxsize)

        torch.manual_seed(self.attention_seed)

    def forward(self, x):
        self._init_attention_seed()
        return self.dropout(self.linear(x))


def make():
    torch.manual_seed(0)
    return MyModel().eval()


def inputs():
    g = torch.Generator().manual_seed(2)
    return [
        (torch.randn(2, 5, generator=g),),
        (torch.randn(1, 5, generator=g),),
        (torch.randn(3, 4, 5, generator=g),),
        (torch.zeros(1, 5),),
        (torch.randn(6, 5, generator=g) * 10,),
        (torch.ones(2, 5),),
        (torch.randn(2, 5, generator=g, dtype=torch.float64).float(),),
        (torch.randn(4, 5, generator=g) - 1,),
    ]
