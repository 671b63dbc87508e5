"""Make PyPI's torchvision importable next to the CPU torch, for the benchmark only.

PyPI's torchvision 0.28 wheel is a CUDA build: its C++ extension does not load next to the CPU
torch 2.13, and `import torchvision` then fails where `_meta_registrations.py` registers a fake
kernel for `torchvision::nms`, an operator nobody defined. Here the operators the detection
models call are defined with torchvision's schemas and plain-torch CPU kernels: `nms` and `qnms`
before torchvision is imported (its own fake kernels, the ones dynamo traces with, are then
registered on them as usual), and `roi_align` after, with torchvision's own fake kernel and its
pure-Python `_roi_align` as the CPU kernel.

`roi_align` matters: without the extension torchvision takes a Python path that calls
`is_compile_supported`, a function dynamo skips: a break the real package does not have. With the
operator defined, dynamo sees what it sees with torchvision's C++ extension: the schema and the
fake kernel. Only the eager computation differs.
"""

from __future__ import annotations

import sys

import torch

_LIBRARY = torch.library.Library("torchvision", "DEF")


def _nms_cpu(dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """Greedy non-maximum suppression, as torchvision's CPU kernel does it: the indices of the
    kept boxes, highest score first."""
    order = scores.argsort(descending=True)
    boxes = dets[order]
    area = (boxes[:, 2] - boxes[:, 0]).clamp(min=0) * (boxes[:, 3] - boxes[:, 1]).clamp(min=0)
    suppressed = torch.zeros(len(order), dtype=torch.bool)
    keep = []
    for i in range(len(order)):
        if suppressed[i]:
            continue
        keep.append(i)
        top_left = torch.maximum(boxes[i, :2], boxes[i + 1 :, :2])
        bottom_right = torch.minimum(boxes[i, 2:], boxes[i + 1 :, 2:])
        inter = (bottom_right - top_left).clamp(min=0).prod(dim=1)
        iou = inter / (area[i] + area[i + 1 :] - inter)
        suppressed[i + 1 :] |= iou > iou_threshold
    return order[torch.tensor(keep, dtype=torch.long)]


def install() -> None:
    """Define the operators once per process (a second call would redefine them and fail)."""
    if hasattr(torch.ops.torchvision, "nms"):
        return
    for name in ("nms", "qnms"):
        _LIBRARY.define(f"{name}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _LIBRARY.impl(name, _nms_cpu, "CPU")
    import torchvision.ops.boxes as boxes
    from torchvision._meta_registrations import meta_roi_align

    roi_align = sys.modules["torchvision.ops.roi_align"]  # the package exports a function of that name

    boxes._assert_has_ops = lambda: None  # nms is here now; the rest is not
    _LIBRARY.define(
        "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
        "int sampling_ratio, bool aligned) -> Tensor"
    )
    _LIBRARY.impl("roi_align", roi_align._roi_align, "CPU")
    torch.library.register_fake("torchvision::roi_align", meta_roi_align, lib=_LIBRARY)
    roi_align._has_ops = lambda: True
    roi_align._assert_has_ops = lambda: None
