"""`.tolist()` of a float tensor (softmax probabilities) splits the graph (GM202)."""
import torch


@torch.compile
def top_prob(logits):
    probs = logits.softmax(dim=-1)
    values = probs.tolist()  # expect: GM202
    return probs * values[0]


def sample():
    return top_prob, (torch.randn(5),), {}
