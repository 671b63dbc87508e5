"""A `@property` getter runs where the attribute is read, and dynamo traces it there: a break in the
getter is a break of the compiled code that reads it (torchtune's `KVCache.size` returns
`self.cache_pos[0].item()`, read from a cross-attention layer through `self.attn.kv_cache.size`).
The layer and the cache reach their holders as constructor arguments."""
import torch
from torch import nn


class KVCache(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.register_buffer("cache_pos", torch.arange(length))

    @property
    def size(self) -> int:
        return self.cache_pos[0].item()  # expect: GM201


class Attention(nn.Module):
    def __init__(self, kv_cache=None):
        super().__init__()
        self.kv_cache = kv_cache
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x)


class CrossAttentionLayer(nn.Module):
    def __init__(self, attn):
        super().__init__()
        self.attn = attn

    def forward(self, x):
        empty_cache = self.attn.kv_cache.size == 0
        if empty_cache:
            return x
        return self.attn(x)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        cache = KVCache(4)
        attn = Attention(kv_cache=cache)
        self.layer = CrossAttentionLayer(attn)

    def forward(self, x):
        return self.layer(x)


def sample():
    return torch.compile(Decoder(), backend="eager"), (torch.randn(2, 4),), {}
