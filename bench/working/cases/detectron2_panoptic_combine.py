"""detectron2 PanopticFPN: combine instance and semantic outputs into a panoptic segmentation.

``combine_semantic_and_instance_outputs`` kept as in the source (instances pasted in score order
with ``.item()`` reads of the score, mask area and overlap, then the stuff classes from
``torch.unique(semantic_results).cpu().tolist()``), called from a reduced inference step that
turns the semantic logits into labels (``sem_seg_r.argmax(dim=0)``) as ``PanopticFPN.forward`` does.
The ``Instances`` object is reduced to a plain attribute holder.

Source: https://github.com/facebookresearch/detectron2/blob/main/detectron2/modeling/meta_arch/panoptic_fpn.py

Breaks: ``instance_results.scores[inst_id]`` (indexing with a 0-d tensor from iterating ``sorted_inds``:
"data dependent operator"), the ``.item()`` reads and branches after it, and ``torch.unique(...)``
(dynamic shape) then ``.cpu().tolist()`` and the Python loop over its values.

HAND: none — the second output is a Python list of dicts (ids, Python float scores and int areas)
whose length and contents depend on tensor values, so host reads must remain.
"""
import torch


class Instances:
    def __init__(self, scores, pred_masks, pred_classes):
        self.scores = scores
        self.pred_masks = pred_masks
        self.pred_classes = pred_classes


def combine_semantic_and_instance_outputs(
    instance_results,
    semantic_results,
    overlap_threshold,
    stuff_area_thresh,
    instances_score_thresh,
):
    panoptic_seg = torch.zeros_like(semantic_results, dtype=torch.int32)

    # sort instance outputs by scores
    sorted_inds = torch.argsort(-instance_results.scores)

    current_segment_id = 0
    segments_info = []

    instance_masks = instance_results.pred_masks.to(dtype=torch.bool, device=panoptic_seg.device)

    # Add instances one-by-one, check for overlaps with existing ones
    for inst_id in sorted_inds:
        score = instance_results.scores[inst_id].item()
        if score < instances_score_thresh:
            break
        mask = instance_masks[inst_id]  # H,W
        mask_area = mask.sum().item()

        if mask_area == 0:
            continue

        intersect = (mask > 0) & (panoptic_seg > 0)
        intersect_area = intersect.sum().item()

        if intersect_area * 1.0 / mask_area > overlap_threshold:
            continue

        if intersect_area > 0:
            mask = mask & (panoptic_seg == 0)

        current_segment_id += 1
        panoptic_seg[mask] = current_segment_id
        segments_info.append(
            {
                "id": current_segment_id,
                "isthing": True,
                "score": score,
                "category_id": instance_results.pred_classes[inst_id].item(),
                "instance_id": inst_id.item(),
            }
        )

    # Add semantic results to remaining empty areas
    semantic_labels = torch.unique(semantic_results).cpu().tolist()
    for semantic_label in semantic_labels:
        if semantic_label == 0:  # 0 is a special "thing" class
            continue
        mask = (semantic_results == semantic_label) & (panoptic_seg == 0)
        mask_area = mask.sum().item()
        if mask_area < stuff_area_thresh:
            continue

        current_segment_id += 1
        panoptic_seg[mask] = current_segment_id
        segments_info.append(
            {
                "id": current_segment_id,
                "isthing": False,
                "category_id": semantic_label,
                "area": mask_area,
            }
        )

    return panoptic_seg, segments_info


def panoptic_inference(sem_seg_r, scores, pred_masks, pred_classes):
    detector_r = Instances(scores, pred_masks, pred_classes)
    return combine_semantic_and_instance_outputs(
        detector_r,
        sem_seg_r.argmax(dim=0),
        0.5,   # combine_overlap_thresh
        4,     # combine_stuff_area_thresh
        0.5,   # combine_instances_score_thresh
    )


def make():
    return panoptic_inference


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for n_inst, h, w, n_cls in [(3, 8, 8, 4), (2, 6, 10, 3), (4, 12, 12, 5), (1, 5, 5, 2),
                                (0, 6, 6, 3), (3, 10, 8, 4), (2, 8, 8, 1), (5, 9, 9, 4)]:
        sem = torch.randn(n_cls, h, w, generator=g)
        scores = torch.rand(n_inst, generator=g)
        masks = torch.rand(n_inst, h, w, generator=g) > 0.6
        classes = torch.randint(0, 80, (n_inst,), generator=g)
        out.append((sem, scores, masks, classes))
    # an empty mask with a high score, and two heavily overlapping masks
    sem, scores, masks, classes = out[2]
    masks[0] = False
    scores[0] = 0.99
    masks[2] = masks[1]
    scores[1:3] = torch.tensor([0.9, 0.8])
    return out


KIND = "item-loop"
