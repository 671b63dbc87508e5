"""PyG's `masked_edge_index(edge_index: Tensor, edge_mask: Tensor)` is handed `edge_type == i`: the
annotation says a tensor but not its dtype, and the caller hands a boolean one, so indexing with
it selects a data-dependent number of edges (dynamo cannot trace the output shape)."""
import torch
from torch import Tensor


def masked_edge_index(edge_index: Tensor, edge_mask: Tensor) -> Tensor:
    return edge_index[:, edge_mask]  # expect: GM402


class EdgeCount(torch.nn.Module):
    def forward(self, edge_index: Tensor, edge_type: Tensor):
        kept = masked_edge_index(edge_index, edge_type == 1)
        return kept.float().sum()


def sample():
    m = EdgeCount()
    edge_index = torch.randint(0, 6, (2, 10), generator=torch.Generator().manual_seed(0))
    return [(m, (edge_index, torch.tensor([0, 1, 1, 2, 0, 1, 2, 2, 1, 0])), {})]
