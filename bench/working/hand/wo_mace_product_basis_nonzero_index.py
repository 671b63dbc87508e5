"""Hand rewrite of cases/wo_mace_product_basis_nonzero_index.py: the element index of each atom is the
`argmax` of its one-hot attributes instead of the column of its `nonzero` entry."""
from dataclasses import dataclass
from typing import Optional

import torch

KIND = "nonzero"
GRAD = True


@dataclass
class CuEquivarianceConfig:
    enabled: bool = True
    layout_str: str = "mul_ir"
    optimize_all: bool = True
    optimize_symmetric: bool = True


class SymmetricContraction(torch.nn.Module):
    """Stand-in for cuet.SymmetricContraction(original_mace=True) on 0e features: per-element weights
    selected by the element index of each atom."""

    def __init__(self, channels: int, correlation: int, num_elements: int):
        super().__init__()
        self.weights = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.randn(num_elements, channels) / (nu + 1)) for nu in range(correlation)]
        )

    def forward(self, x: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(x)
        for nu, w in enumerate(self.weights):
            out = out + w[indices.long()] * x ** (nu + 1)
        return out


class EquivariantProductBasisBlock(torch.nn.Module):
    def __init__(
        self,
        channels: int,
        correlation: int,
        use_sc: bool = True,
        num_elements: Optional[int] = None,
        cueq_config: Optional[CuEquivarianceConfig] = None,
    ) -> None:
        super().__init__()

        self.use_sc = use_sc
        self.symmetric_contractions = SymmetricContraction(channels, correlation, num_elements)
        # Update linear
        self.linear = torch.nn.Linear(channels, channels)
        self.cueq_config = cueq_config

    def forward(
        self,
        node_feats: torch.Tensor,
        sc: Optional[torch.Tensor],
        node_attrs: torch.Tensor,
    ) -> torch.Tensor:
        use_cueq = False
        use_cueq_mul_ir = False
        if hasattr(self, "cueq_config"):
            if self.cueq_config is not None:
                if self.cueq_config.enabled and (
                    self.cueq_config.optimize_all or self.cueq_config.optimize_symmetric
                ):
                    use_cueq = True
                if self.cueq_config.layout_str == "mul_ir":
                    use_cueq_mul_ir = True
        if use_cueq:
            if use_cueq_mul_ir:
                node_feats = torch.transpose(node_feats, 1, 2)
            index_attrs = torch.argmax(node_attrs, dim=1).int()
            node_feats = self.symmetric_contractions(
                node_feats.flatten(1),
                index_attrs,
            )
        else:
            node_feats = self.symmetric_contractions(node_feats, node_attrs)
        if self.use_sc and sc is not None:
            return self.linear(node_feats) + sc
        return self.linear(node_feats)


def make():
    torch.manual_seed(0)
    return EquivariantProductBasisBlock(4, correlation=2, use_sc=True, num_elements=3,
                                        cueq_config=CuEquivarianceConfig())


def inputs():
    g = torch.Generator().manual_seed(4)

    def one_hot(z):
        return torch.nn.functional.one_hot(torch.tensor(z), 3).to(torch.get_default_dtype())

    feats = lambda n: torch.randn(n, 4, 1, generator=g)  # [n_nodes, channels, (lmax+1)^2] in mul_ir
    return [
        (feats(5), None, one_hot([0, 1, 2, 1, 0])),
        (feats(5), torch.randn(5, 4, generator=g), one_hot([2, 2, 2, 2, 2])),
        (feats(1), None, one_hot([1])),
        (feats(3), torch.randn(3, 4, generator=g), one_hot([0, 0, 1])),
        (feats(6), None, one_hot([2, 1, 0, 2, 1, 0])),
        (feats(2), None, one_hot([1, 2])),
        (feats(4), torch.zeros(4, 4), one_hot([0, 2, 0, 2])),
        (feats(7), None, one_hot([0, 1, 1, 1, 2, 0, 1])),
    ]
