"""A dataclass config read inside compiled code is traced: no break."""
from dataclasses import dataclass

import torch


@dataclass
class Config:
    scale: float = 2.0
    shift: float = 1.0


CFG = Config()


@torch.compile
def f(x):
    out = Config(scale=CFG.scale * 2)
    return x * out.scale + CFG.shift
