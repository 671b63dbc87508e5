"""`"%s" % (t,)` formats a tensor and makes dynamo skip the whole function (GM208, frame-skip)."""
import torch


@torch.compile
def f(x):
    y = x.softmax(dim=-1)
    msg = "probs=%s" % (y,)  # expect: GM208
    return y * len(msg)
