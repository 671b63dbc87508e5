"""One timm or torchvision model in its own process (run by run.py with a timeout).

    probe.py timm MODEL_NAME        graphs and break sites (counting backend + graph_breaks log)
    probe.py torchvision MODEL_NAME and the lines an eager call runs, inside the model's package

Random weights, eval mode, one small input; prints one JSON line. torchvision's operators come
from torchvision_shim (PyPI's torchvision cannot load its own next to the CPU torch).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1] / "models"))  # probe_record

# torchvision detection models at a size a 2-core CPU compiles in a minute; score threshold 0
# so that the post-processing (box decoding, NMS, masks) runs on boxes, not on an empty set
DETECTION = {
    "fasterrcnn_mobilenet_v3_large_fpn": {"box_score_thresh": 0.0},
    "fasterrcnn_resnet50_fpn": {"box_score_thresh": 0.0},
    "maskrcnn_resnet50_fpn": {"box_score_thresh": 0.0},
    "keypointrcnn_resnet50_fpn": {"box_score_thresh": 0.0},
    "retinanet_resnet50_fpn": {"score_thresh": 0.0},
    "fcos_resnet50_fpn": {"score_thresh": 0.0},
    "ssd300_vgg16": {"score_thresh": 0.0},
    "ssdlite320_mobilenet_v3_large": {"score_thresh": 0.0},
}


def build(family: str, name: str) -> tuple[Any, tuple[Any, ...], Path]:
    import torch
    import torchvision_shim

    torchvision_shim.install()  # timm imports torchvision too, when it is there
    torch.manual_seed(0)
    if family == "torchvision":
        import torchvision
        from torchvision.models import detection

        size = {} if name.startswith("ssd") else {"min_size": 128, "max_size": 160}
        model = getattr(detection, name)(weights=None, weights_backbone=None, **size, **DETECTION[name]).eval()
        images = [torch.rand(3, 120, 150), torch.rand(3, 128, 128)]
        return model, (images,), Path(torchvision.__file__).resolve().parent
    import timm

    model = timm.create_model(name, pretrained=False).eval()
    channels, height, width = model.pretrained_cfg.get("input_size", (3, 224, 224))
    return model, (torch.rand(1, channels, height, width),), Path(timm.__file__).resolve().parent


def breaks(family: str, name: str) -> dict[str, Any]:
    import torch
    from graphmend.runtime.worker import capture, covered_lines
    from probe_record import break_record

    model, args, package = build(family, name)
    with torch.no_grad():
        model(*args)  # a model that does not run eagerly is not a compile result
        result = capture(model, args)
        coverage = covered_lines(model, args, {}, str(package)) if result["error"] is None else {}
    return break_record(result, coverage, package)


def main() -> int:
    family, name = sys.argv[1], sys.argv[2]
    warnings.simplefilter("ignore")
    try:
        row = {"ok": True, **breaks(family, name)}
    except Exception as error:  # a model that does not build or run small: recorded, not fatal
        row = {"ok": False, "error": f"{type(error).__name__}: {error}"[:300]}
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
