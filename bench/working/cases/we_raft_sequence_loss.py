"""RAFT optical-flow training loss: the L1 loss over the sequence of iterative flow refinements,
exponentially weighted, on valid pixels (valid flag and |flow| < 400); then the end-point-error
metrics of the last prediction, gathered on the valid pixels and turned into Python floats for
the logger.

Source: https://github.com/princeton-vl/RAFT/blob/master/train.py (`sequence_loss`, called in
`train` as `loss, metrics = sequence_loss(flow_predictions, flow, valid, args.gamma)`). The flow
predictions are 3 refinements of a 2-channel flow on 4x5 images.

Breaks: `epe.view(-1)[valid.view(-1)]` (boolean-mask gather: data-dependent output shape) and the four
`.item()` calls building `metrics`.

HAND (partial): masked sums instead of the gather (`(epe * valid).sum() / valid.sum()`, the same NaN
when no pixel is valid), and the four metrics read back with one `torch.stack([...]).tolist()`:
the metrics stay Python floats returned to the caller, so one `.tolist()` site remains.
"""
import torch

KIND = "mask-item"
GRAD = True

# exclude extremly large displacements
MAX_FLOW = 400


def sequence_loss(flow_preds, flow_gt, valid, gamma=0.8, max_flow=MAX_FLOW):
    """ Loss function defined over sequence of flow predictions """

    n_predictions = len(flow_preds)
    flow_loss = 0.0

    # exlude invalid pixels and extremely large diplacements
    mag = torch.sum(flow_gt**2, dim=1).sqrt()
    valid = (valid >= 0.5) & (mag < max_flow)

    for i in range(n_predictions):
        i_weight = gamma**(n_predictions - i - 1)
        i_loss = (flow_preds[i] - flow_gt).abs()
        flow_loss += i_weight * (valid[:, None] * i_loss).mean()

    epe = torch.sum((flow_preds[-1] - flow_gt)**2, dim=1).sqrt()
    epe = epe.view(-1)[valid.view(-1)]

    metrics = {
        'epe': epe.mean().item(),
        '1px': (epe < 1).float().mean().item(),
        '3px': (epe < 3).float().mean().item(),
        '5px': (epe < 5).float().mean().item(),
    }

    return flow_loss, metrics


def make():
    return sequence_loss


def inputs():
    g = torch.Generator().manual_seed(11)

    def case(b, scale, p_valid, gamma=0.8, big=False, iters=3):
        flow = torch.randn(b, 2, 4, 5, generator=g) * 4
        if big:
            flow[0, :, 0, :2] = 500.0              # beyond MAX_FLOW: excluded
        preds = [(flow + torch.randn(b, 2, 4, 5, generator=g) * scale / (i + 1)).requires_grad_()
                 for i in range(iters)]
        valid = (torch.rand(b, 4, 5, generator=g) < p_valid).float()
        return (preds, flow, valid, gamma)

    return [
        case(2, 2.0, 0.8),
        case(1, 0.5, 1.0),
        case(2, 6.0, 0.5, gamma=0.9),
        case(1, 1.0, 0.9, big=True),
        case(3, 3.0, 0.7, iters=2),
        case(2, 2.0, 0.0),                          # no valid pixel: NaN metrics
        case(1, 10.0, 1.0, big=True, iters=4),
        case(2, 0.2, 0.6, gamma=0.5),
    ]
