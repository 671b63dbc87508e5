"""SchNetPack Atomwise output head: per-atom MLP then sum/avg per molecule with
``maxm = int(idx_m[-1]) + 1`` as the scatter size.

``Atomwise.forward`` kept as in the source (the inputs dict keyed by ``properties``, optional
per-atom output, ``snn.scatter_add`` with ``dim_size=maxm`` — a TorchScript-compiled helper in
SchNetPack —, the "avg" division by ``n_atoms``); ``build_mlp`` reduced to two Dense layers with
shifted softplus; a batch of molecules in SchNetPack's layout (atoms concatenated, ``idx_m`` the
molecule index of each atom, ``n_atoms`` per molecule).

Source: https://github.com/atomistic-machine-learning/schnetpack/blob/master/src/schnetpack/atomistic/atomwise.py
        https://github.com/atomistic-machine-learning/schnetpack/blob/master/src/schnetpack/nn/scatter.py

Breaks: ``int(idx_m[-1])`` (a tensor value converted to a Python int, used as an output size).

HAND: the number of molecules is ``inputs[properties.n_atoms].shape[0]`` (a static size): in
SchNetPack's batch layout ``idx_m`` is sorted, runs over 0..n_mol-1 and every molecule has at least
one atom, so ``int(idx_m[-1]) + 1`` equals it.
"""
from typing import Dict

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class properties:
    idx_m = "_idx_m"
    n_atoms = "_n_atoms"


def shifted_softplus(x: torch.Tensor):
    return F.softplus(x) - math.log(2.0)


@torch.jit.script
def _scatter_add(x: torch.Tensor, idx_i: torch.Tensor, dim_size: int, dim: int = 0) -> torch.Tensor:
    shape = list(x.shape)
    shape[dim] = dim_size
    tmp = torch.zeros(shape, dtype=x.dtype, device=x.device)
    y = tmp.index_add(dim, idx_i, x)
    return y


def scatter_add(x: torch.Tensor, idx_i: torch.Tensor, dim_size: int, dim: int = 0) -> torch.Tensor:
    return _scatter_add(x, idx_i, dim_size, dim)


class Atomwise(nn.Module):
    def __init__(self, n_in, n_out=1, aggregation_mode="sum", output_key="y", per_atom_output_key=None):
        super().__init__()
        self.output_key = output_key
        self.model_outputs = [output_key]
        self.per_atom_output_key = per_atom_output_key
        if self.per_atom_output_key is not None:
            self.model_outputs.append(self.per_atom_output_key)
        self.n_out = n_out

        if aggregation_mode is None and self.per_atom_output_key is None:
            raise ValueError(
                "If `aggregation_mode` is None, `per_atom_output_key` needs to be set,"
                + " since no accumulated output will be returned!"
            )

        self.outnet = nn.Sequential(nn.Linear(n_in, n_in // 2), nn.Linear(n_in // 2, n_out))
        self.aggregation_mode = aggregation_mode

    def forward(self, inputs: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        # predict atomwise contributions
        y = self.outnet[1](shifted_softplus(self.outnet[0](inputs["scalar_representation"])))

        # accumulate the per-atom output if necessary
        if self.per_atom_output_key is not None:
            inputs[self.per_atom_output_key] = y

        # aggregate
        if self.aggregation_mode is not None:
            idx_m = inputs[properties.idx_m]
            maxm = int(idx_m[-1]) + 1
            y = scatter_add(y, idx_m, dim_size=maxm)
            y = torch.squeeze(y, -1)

            if self.aggregation_mode == "avg":
                y = y / inputs[properties.n_atoms]

        inputs[self.output_key] = y
        return inputs


class EnergyAndMeanCharge(nn.Module):
    def __init__(self, n_in=8):
        super().__init__()
        self.energy = Atomwise(n_in, aggregation_mode="sum", output_key="energy", per_atom_output_key="atomic_energy")
        self.charge = Atomwise(n_in, aggregation_mode="avg", output_key="mean_charge")

    def forward(self, inputs):
        inputs = self.energy(inputs)
        inputs = self.charge(inputs)
        return inputs["energy"], inputs["mean_charge"]


def make():
    torch.manual_seed(0)
    return EnergyAndMeanCharge()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for counts in [[3, 2], [1], [4, 1, 2], [5], [2, 2, 2, 2], [1, 1], [6, 3], [3, 1, 4, 1, 5]]:
        n_atoms = torch.tensor(counts)
        idx_m = torch.repeat_interleave(torch.arange(len(counts)), n_atoms)
        out.append(({
            "scalar_representation": torch.randn(int(n_atoms.sum()), 8, generator=g),
            properties.idx_m: idx_m,
            properties.n_atoms: n_atoms,
        },))
    return out


KIND = "int-size"
GRAD = True
