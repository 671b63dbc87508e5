"""`assert lengths.max().item() <= n`: the assert is fine, its `.item()` splits the graph (GM201)."""
import torch


@torch.compile
def embed(ids, lengths, table):
    assert lengths.max().item() <= ids.shape[1]  # expect: GM201
    return table[ids].sum(1)


def sample():
    ids = torch.tensor([[1, 2, 0], [3, 1, 2]])
    return embed, (ids, torch.tensor([2, 3]), torch.randn(4, 8)), {}
