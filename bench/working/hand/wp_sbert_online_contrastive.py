"""sentence-transformers OnlineContrastiveLoss.forward -- hand rewrite (masked sums, no gathers).

Source: https://github.com/UKPLab/sentence-transformers/blob/master/sentence_transformers/losses/OnlineContrastiveLoss.py
HAND: counts via mask.sum(), thresholds via torch.where on the counts, losses as sums over
where(selected, ..., 0).
"""
import torch
import torch.nn.functional as F
from torch import nn

KIND = "bool-mask gather + len"
GRAD = True


class SiameseDistanceMetric:
    EUCLIDEAN = lambda x, y: F.pairwise_distance(x, y, p=2)  # noqa: E731
    MANHATTAN = lambda x, y: F.pairwise_distance(x, y, p=1)  # noqa: E731
    COSINE_DISTANCE = lambda x, y: 1 - F.cosine_similarity(x, y)  # noqa: E731


class TinySentenceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 4)

    def forward(self, features):
        features["sentence_embedding"] = self.proj(features["token_embeddings"])
        return features


class OnlineContrastiveLoss(nn.Module):
    def __init__(self, model, distance_metric=SiameseDistanceMetric.COSINE_DISTANCE, margin: float = 0.5):
        super(OnlineContrastiveLoss, self).__init__()
        self.model = model
        self.margin = margin
        self.distance_metric = distance_metric

    def forward(self, sentence_features, labels, size_average=False):
        embeddings = [self.model(sentence_feature)["sentence_embedding"] for sentence_feature in sentence_features]

        distance_matrix = self.distance_metric(embeddings[0], embeddings[1])
        neg_mask = labels == 0
        pos_mask = labels == 1
        n_neg = neg_mask.sum()
        n_pos = pos_mask.sum()
        d = distance_matrix.detach()  # thresholds are only compared against
        inf = torch.tensor(float("inf"), dtype=d.dtype)
        poss_max = torch.where(pos_mask, d, -inf).max()
        negs_min = torch.where(neg_mask, d, inf).min()
        negs_mean = torch.where(neg_mask, d, 0).sum() / n_neg
        poss_mean = torch.where(pos_mask, d, 0).sum() / n_pos

        # select hard positive and hard negative pairs
        neg_sel = neg_mask & (distance_matrix < torch.where(n_pos > 1, poss_max, negs_mean))
        pos_sel = pos_mask & (distance_matrix > torch.where(n_neg > 1, negs_min, poss_mean))

        positive_loss = torch.where(pos_sel, distance_matrix, 0).pow(2).sum()
        negative_loss = torch.where(neg_sel, F.relu(self.margin - distance_matrix), 0).pow(2).sum()
        loss = positive_loss + negative_loss
        return loss


def make():
    torch.manual_seed(0)
    return OnlineContrastiveLoss(TinySentenceModel())


def _pair(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [{"token_embeddings": torch.randn(n, 6, generator=g)}, {"token_embeddings": torch.randn(n, 6, generator=g)}]


def inputs():
    return [
        (_pair(6, 1), torch.tensor([1, 0, 1, 0, 1, 0])),
        (_pair(6, 2), torch.tensor([1, 1, 1, 0, 0, 0])),
        (_pair(5, 3), torch.tensor([0, 0, 0, 0, 1])),          # one positive -> negs.mean()
        (_pair(5, 4), torch.tensor([1, 1, 1, 1, 0])),          # one negative -> poss.mean()
        (_pair(4, 5), torch.tensor([1, 1, 1, 1])),             # no negatives
        (_pair(4, 6), torch.tensor([0, 0, 0, 0])),             # no positives
        (_pair(8, 7), torch.tensor([0, 1, 0, 1, 1, 0, 0, 1])),
        (_pair(3, 8), torch.tensor([1, 0, 0])),
        (_pair(2, 9), torch.tensor([1, 0])),
    ]
