"""open_clip get_clip_metrics: image<->text retrieval mean/median rank and R@k on a validation batch.

Source: https://github.com/mlfoundations/open_clip/blob/main/src/open_clip_train/train.py
(get_clip_metrics, called from evaluate()).

Breaks: `preds = torch.where(ranking == ground_truth)[1]` -- the one-argument torch.where
(nonzero, data-dependent output shape), followed by a `.numpy()` round trip and NumPy statistics.

HAND: none -- the caller gets NumPy float64 scalars. Replacing the nonzero by
`(ranking == ground_truth).int().argmax(dim=1)` (exactly one match per row) removes the break, but
dynamo then traces the NumPy statistics and returns 0-d ndarrays instead of np.float64 (checked:
"float64 vs ndarray" on every metric); converting back needs a call outside the graph, i.e. a
break again.
"""
import numpy as np
import torch

KIND = "nonzero + numpy"


def get_clip_metrics(image_features, text_features, logit_scale):
    metrics = {}
    logits_per_image = (logit_scale * image_features @ text_features.t()).detach().cpu()
    logits_per_text = logits_per_image.t().detach().cpu()

    logits = {"image_to_text": logits_per_image, "text_to_image": logits_per_text}
    ground_truth = torch.arange(len(text_features)).view(-1, 1)

    for name, logit in logits.items():
        ranking = torch.argsort(logit, descending=True)
        preds = torch.where(ranking == ground_truth)[1]
        preds = preds.detach().cpu().numpy()
        metrics[f"{name}_mean_rank"] = preds.mean() + 1
        metrics[f"{name}_median_rank"] = np.floor(np.median(preds)) + 1
        for k in [1, 5, 10]:
            metrics[f"{name}_R@{k}"] = np.mean(preds < k)

    return metrics


def make():
    return get_clip_metrics


def _feats(n, d, seed, noise=0.5):
    g = torch.Generator().manual_seed(seed)
    img = torch.nn.functional.normalize(torch.randn(n, d, generator=g), dim=-1)
    txt = torch.nn.functional.normalize(img + noise * torch.randn(n, d, generator=g), dim=-1)
    return img, txt, torch.tensor(100.0)


def inputs():
    return [
        _feats(6, 8, 1),
        _feats(12, 8, 2),
        _feats(4, 4, 3, noise=5.0),
        _feats(1, 4, 4),
        _feats(16, 16, 5, noise=0.05),
        _feats(8, 4, 6, noise=2.0),
        _feats(3, 8, 7),
        _feats(20, 8, 8, noise=1.0),
    ]
