"""YOLOv8 loss: per-image padding of the batch's target list (image index, class, xywh).

Source: https://github.com/ultralytics/ultralytics/blob/v8.2.0/ultralytics/utils/loss.py
(`v8DetectionLoss.preprocess`) and https://github.com/ultralytics/ultralytics/blob/v8.2.0/ultralytics/utils/ops.py
(`xywh2xyxy`).

Breaks: `i.unique(return_counts=True)` (dynamic output shape), `torch.zeros(batch_size, counts.max(), ...)`
(a size read from the data), and in the per-image loop `if n := matches.sum():` with
`targets[matches, 1:]` (boolean-mask gather) written into `out[j, :n]`.

HAND: none — the output's second dimension is the largest number of targets in one image,
a data-dependent size, so some break (or a host read) stays whatever the rewrite.
"""

import numpy as np
import torch

KIND = "unique-shape"


def xywh2xyxy(x):
    assert x.shape[-1] == 4, f"input shape last dimension expected 4 but input shape is {x.shape}"
    y = torch.empty_like(x) if isinstance(x, torch.Tensor) else np.empty_like(x)  # faster than clone/copy
    dw = x[..., 2] / 2  # half-width
    dh = x[..., 3] / 2  # half-height
    y[..., 0] = x[..., 0] - dw  # top left x
    y[..., 1] = x[..., 1] - dh  # top left y
    y[..., 2] = x[..., 0] + dw  # bottom right x
    y[..., 3] = x[..., 1] + dh  # bottom right y
    return y


class v8DetectionLoss:
    def __init__(self):
        self.device = torch.device("cpu")

    def preprocess(self, targets, batch_size, scale_tensor):
        """Preprocesses the target counts and matches with the input batch size to output a tensor."""
        nl, ne = targets.shape
        if nl == 0:
            out = torch.zeros(batch_size, 0, ne - 1, device=self.device)
        else:
            i = targets[:, 0]  # image index
            _, counts = i.unique(return_counts=True)
            counts = counts.to(dtype=torch.int32)
            out = torch.zeros(batch_size, counts.max(), ne - 1, device=self.device)
            for j in range(batch_size):
                matches = i == j
                if n := matches.sum():
                    out[j, :n] = targets[matches, 1:]
            out[..., 1:5] = xywh2xyxy(out[..., 1:5].mul_(scale_tensor))
        return out


def make():
    return v8DetectionLoss().preprocess


def inputs():
    g = torch.Generator().manual_seed(14)
    scale = torch.tensor([64.0, 48.0, 64.0, 48.0])

    def targets(img_ids):
        n = len(img_ids)
        cls = torch.randint(0, 3, (n, 1), generator=g).float()
        xywh = torch.rand(n, 4, generator=g) * 0.5 + 0.1
        return torch.cat((torch.tensor(img_ids, dtype=torch.float)[:, None], cls, xywh), 1)

    return [
        (targets([0, 0, 1]), 2, scale),
        (targets([0, 1, 1, 1, 2]), 3, scale),
        (targets([1, 1]), 2, scale),                 # image 0 has no target
        (targets([0]), 1, scale),
        (torch.zeros(0, 6), 2, scale),               # no targets at all
        (targets([2, 0, 2, 2, 0]), 4, scale),        # unsorted image indices, images 1 and 3 empty
        (targets([0, 1, 2, 3]), 4, scale),
        (targets([0, 0, 0, 0, 0, 0]), 1, scale),
    ]
