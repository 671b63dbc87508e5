"""A loss that only this module docstring shows called, as its training script calls it:
`loss, metrics = flow_loss(preds, gt, valid)` (RAFT's `sequence_loss`). A name in a docstring or
a comment is no call: the function is not one that runs only at import time, and nothing in the
file compiles it, so its breaks are reported if compiled. The helper the top level really calls,
`scale(...)` below, runs at import time only: not checked."""
import torch


# nor is one in a comment: flow_loss(preds, gt, valid)


def flow_loss(preds, gt, valid):
    mag = torch.sum(gt**2, dim=1).sqrt()
    valid = (valid >= 0.5) & (mag < 400)
    loss = (valid[:, None] * (preds - gt).abs()).mean()
    epe = torch.sum((preds - gt) ** 2, dim=1).sqrt().view(-1)[valid.view(-1)]  # expect if compiled: GM402
    return loss, {"epe": epe.mean().item()}  # expect if compiled: GM201


def scale(t):
    return t.max().item() * 2


SCALE = scale(torch.ones(3))


@torch.compile
def f(x):  # the file's compiled code: it calls none of the functions above
    return x * 2


def sample():
    return f, (torch.randn(4),), {}


def sample_if_compiled():
    gt = torch.randn(2, 2, 4, 4)
    return flow_loss, (torch.randn(2, 2, 4, 4), gt, torch.rand(2, 4, 4)), {}
