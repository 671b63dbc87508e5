"""The same helper handed integer positions (`torch.nonzero` done outside, with a fixed count via
`topk`): an integer index has the shape of the index, and dynamo traces it (no break)."""
import torch
from torch import Tensor


def masked_edge_index(edge_index: Tensor, edge_mask: Tensor) -> Tensor:
    return edge_index[:, edge_mask]


class EdgeCount(torch.nn.Module):
    def forward(self, edge_index: Tensor, edge_type: Tensor):
        kept = masked_edge_index(edge_index, edge_type.topk(3).indices)
        return kept.float().sum()


def sample():
    m = EdgeCount()
    edge_index = torch.randint(0, 6, (2, 10), generator=torch.Generator().manual_seed(0))
    return [(m, (edge_index, torch.tensor([0, 1, 1, 2, 0, 1, 2, 2, 1, 0])), {})]
