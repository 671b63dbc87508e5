"""A compiled generator function: dynamo compiles nothing and logs nothing (GM509)."""
import torch


@torch.compile
def stream_chunks(x):
    for chunk in x.chunk(2):
        yield chunk * 2  # expect: GM509


def sample():
    return stream_chunks, (torch.randn(4),), {}
