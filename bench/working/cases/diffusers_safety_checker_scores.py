"""diffusers StableDiffusionSafetyChecker.forward: per-image concept scores built on the host
(NumPy distances, ``.item()`` thresholds, ``round``), black-out of flagged images and a logger warning.

``forward`` kept as in the source (``cosine_distance(...).cpu().float().numpy()``, the per-image /
per-concept Python loops with the ``adjustment`` that changes after a special-care hit, the
``has_nsfw_concepts`` list, ``images[idx] = torch.zeros_like(images[idx])`` and the
``logger.warning`` when any image is flagged); the CLIP vision tower is reduced to a linear patch
embedding with mean pooling, and the concept embeddings/thresholds are small random buffers so
both outcomes occur.

Source: https://github.com/huggingface/diffusers/blob/main/src/diffusers/pipelines/stable_diffusion/safety_checker.py

Breaks: ``self.special_care_embeds_weights[concept_idx].item()`` inside the per-concept loop (a
break inside a ``for`` loop: dynamo gives up on the frame, so the NumPy scores, the black-out and
the ``logger.warning`` then run eagerly; ``.cpu().float().numpy()`` itself is traced).

HAND: none — the checker returns ``has_nsfw_concepts`` as a Python list of bools decided by tensor
values (and builds per-image dicts of rounded Python floats), so host reads must remain.
"""
import logging

import numpy as np
import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


def cosine_distance(image_embeds, text_embeds):
    normalized_image_embeds = nn.functional.normalize(image_embeds)
    normalized_text_embeds = nn.functional.normalize(text_embeds)
    return torch.mm(normalized_image_embeds, normalized_text_embeds.t())


class TinyVisionModel(nn.Module):
    def __init__(self, patch=4, hidden=8):
        super().__init__()
        self.patch = nn.Conv2d(3, hidden, patch, stride=patch)

    def forward(self, pixel_values):
        h = self.patch(pixel_values).flatten(2).transpose(1, 2)
        return h, h.mean(1)  # (last_hidden_state, pooled_output)


class StableDiffusionSafetyChecker(nn.Module):
    def __init__(self, hidden=8, projection_dim=6):
        super().__init__()
        self.vision_model = TinyVisionModel(hidden=hidden)
        self.visual_projection = nn.Linear(hidden, projection_dim, bias=False)

        self.concept_embeds = nn.Parameter(torch.randn(5, projection_dim), requires_grad=False)
        self.special_care_embeds = nn.Parameter(torch.randn(3, projection_dim), requires_grad=False)

        self.register_buffer("concept_embeds_weights", torch.rand(5) * 0.6 + 0.3)
        self.register_buffer("special_care_embeds_weights", torch.rand(3) * 0.6 + 0.3)

    @torch.no_grad()
    def forward(self, clip_input, images):
        pooled_output = self.vision_model(clip_input)[1]  # pooled_output
        image_embeds = self.visual_projection(pooled_output)

        # we always cast to float32 as this does not cause significant overhead and is compatible with bfloat16
        special_cos_dist = cosine_distance(image_embeds, self.special_care_embeds).cpu().float().numpy()
        cos_dist = cosine_distance(image_embeds, self.concept_embeds).cpu().float().numpy()

        result = []
        batch_size = image_embeds.shape[0]
        for i in range(batch_size):
            result_img = {"special_scores": {}, "special_care": [], "concept_scores": {}, "bad_concepts": []}

            # increase this value to create a stronger `nfsw` filter
            # at the cost of increasing the possibility of filtering benign images
            adjustment = 0.0

            for concept_idx in range(len(special_cos_dist[0])):
                concept_cos = special_cos_dist[i][concept_idx]
                concept_threshold = self.special_care_embeds_weights[concept_idx].item()
                result_img["special_scores"][concept_idx] = round(concept_cos - concept_threshold + adjustment, 3)
                if result_img["special_scores"][concept_idx] > 0:
                    result_img["special_care"].append({concept_idx, result_img["special_scores"][concept_idx]})
                    adjustment = 0.01

            for concept_idx in range(len(cos_dist[0])):
                concept_cos = cos_dist[i][concept_idx]
                concept_threshold = self.concept_embeds_weights[concept_idx].item()
                result_img["concept_scores"][concept_idx] = round(concept_cos - concept_threshold + adjustment, 3)
                if result_img["concept_scores"][concept_idx] > 0:
                    result_img["bad_concepts"].append(concept_idx)

            result.append(result_img)

        has_nsfw_concepts = [len(res["bad_concepts"]) > 0 for res in result]

        for idx, has_nsfw_concept in enumerate(has_nsfw_concepts):
            if has_nsfw_concept:
                if torch.is_tensor(images) or torch.is_tensor(images[0]):
                    images[idx] = torch.zeros_like(images[idx])  # black image
                else:
                    images[idx] = np.zeros(images[idx].shape)  # black image

        if any(has_nsfw_concepts):
            logger.warning(
                "Potential NSFW content was detected in one or more images. A black image will be returned instead."
                " Try again with a different prompt and/or seed."
            )

        return images, has_nsfw_concepts


def make():
    torch.manual_seed(0)
    return StableDiffusionSafetyChecker()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for b in [1, 2, 3, 1, 4, 2, 1, 3]:
        clip_input = torch.randn(b, 3, 8, 8, generator=g)
        images = torch.rand(b, 3, 8, 8, generator=g)
        out.append((clip_input, images))
    return out


KIND = "numpy-item-loop"
