"""segment_anything.utils.amg.mask_to_rle_pytorch (encodes the automatic mask generator's binary
masks to uncompressed COCO run-length encodings).

Source: https://github.com/facebookresearch/segment-anything/blob/main/segment_anything/utils/amg.py
(`mask_to_rle_pytorch`, called from SamAutomaticMaskGenerator._process_crop / generate).

Breaks: `diff.nonzero()` and `change_indices[change_indices[:, 0] == i, 1]` (dynamic shapes),
`if tensor[i, 0] == 0` (data-dependent branch) and `btw_idxs.detach().cpu().tolist()`.

HAND: none — the result is a list of dicts of Python int lists whose lengths are the number of
runs in each mask: some device-to-host read stays whatever the rewrite.
"""
from typing import Any, Dict, List

import torch

KIND = "nonzero+tolist"


def mask_to_rle_pytorch(tensor: torch.Tensor) -> List[Dict[str, Any]]:
    """
    Encodes masks to an uncompressed RLE, in the format expected by
    pycoco tools.
    """
    # Put in fortran order and flatten h,w
    b, h, w = tensor.shape
    tensor = tensor.permute(0, 2, 1).flatten(1)

    # Compute change indices
    diff = tensor[:, 1:] ^ tensor[:, :-1]
    change_indices = diff.nonzero()

    # Encode run length
    out = []
    for i in range(b):
        cur_idxs = change_indices[change_indices[:, 0] == i, 1]
        cur_idxs = torch.cat(
            [
                torch.tensor([0], dtype=cur_idxs.dtype, device=cur_idxs.device),
                cur_idxs + 1,
                torch.tensor([h * w], dtype=cur_idxs.dtype, device=cur_idxs.device),
            ]
        )
        btw_idxs = cur_idxs[1:] - cur_idxs[:-1]
        counts = [] if tensor[i, 0] == 0 else [0]
        counts.extend(btw_idxs.detach().cpu().tolist())
        out.append({"size": [h, w], "counts": counts})
    return out


def make():
    return mask_to_rle_pytorch


def inputs():
    torch.manual_seed(0)
    return [
        (torch.rand(2, 4, 5) > 0.5,),
        (torch.zeros(1, 3, 3, dtype=torch.bool),),           # empty mask: one run
        (torch.ones(2, 3, 4, dtype=torch.bool),),            # full masks start with a 0-length run
        (torch.rand(3, 6, 6) > 0.7,),
        (torch.eye(4, dtype=torch.bool)[None],),
        (torch.rand(1, 1, 8) > 0.5,),
        (torch.rand(4, 2, 3) > 0.2,),
        (torch.tensor([[[True, False], [False, True]], [[False, False], [True, True]]]),),
    ]
