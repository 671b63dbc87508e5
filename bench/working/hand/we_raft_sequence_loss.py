"""Hand rewrite of cases/we_raft_sequence_loss.py (partial): masked sums over the valid pixels
instead of the boolean-mask gather, and the four metrics read back with a single `.tolist()` (they
are Python floats returned to the caller, so that one site remains)."""
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
    epe = epe.view(-1)
    valid_flat = valid.view(-1)
    n_valid = valid_flat.sum().float()
    # masked means over the valid pixels (0/0 = NaN when none is valid, as the mean of an empty gather)
    epe_mean = torch.where(valid_flat, epe, torch.zeros_like(epe)).sum() / n_valid
    px1 = (valid_flat & (epe < 1)).float().sum() / n_valid
    px3 = (valid_flat & (epe < 3)).float().sum() / n_valid
    px5 = (valid_flat & (epe < 5)).float().sum() / n_valid
    epe_v, px1_v, px3_v, px5_v = torch.stack([epe_mean, px1, px3, px5]).tolist()

    metrics = {
        'epe': epe_v,
        '1px': px1_v,
        '3px': px3_v,
        '5px': px5_v,
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
