"""sentence-transformers' `BatchAllTripletLoss`: the loss over all valid (anchor, positive, negative)
triplets of a batch, averaged over the triplets whose loss is positive; that count is the length of a
boolean-mask gather, `triplet_loss[triplet_loss > 1e-16].size(0)`, used as a Python int.

Source: https://github.com/UKPLab/sentence-transformers/blob/v2.2.2/sentence_transformers/losses/BatchAllTripletLoss.py
(`BatchAllTripletLoss.batch_all_triplet_loss`) and
https://github.com/UKPLab/sentence-transformers/blob/v2.2.2/sentence_transformers/losses/BatchHardTripletLoss.py
(`BatchHardTripletLossDistanceFunction.eucledian_distance`, `BatchHardTripletLoss.get_triplet_mask`).
The SentenceTransformer model is dropped: the callable takes the labels and the embeddings. Default
margin 5; batch 3-8, embedding dim 4.

Breaks: `valid_triplets = triplet_loss[triplet_loss > 1e-16]` (boolean-mask indexing, data-dependent
shape) whose `.size(0)` is the divisor.

HAND: `num_positive_triplets = (triplet_loss > 1e-16).sum()` (a 0-d int64 tensor; `n + 1e-16`
rounds to `n` in float32 as it does in double, and to 1e-16 when n == 0), so the division traces;
`triplet_loss[triplet_loss < 0] = 0` becomes the equivalent out-of-place `torch.where` (the in-place
form gives wrong gradients under inductor once the graph is whole).
"""
import torch
from torch import nn

KIND = "boolmask-size"
GRAD = True


class BatchHardTripletLossDistanceFunction:
    @staticmethod
    def eucledian_distance(embeddings, squared=False):
        dot_product = torch.matmul(embeddings, embeddings.t())

        # Get squared L2 norm for each embedding. We can just take the diagonal of `dot_product`.
        # This also provides more numerical stability (the diagonal of the result will be exactly 0).
        # shape (batch_size,)
        square_norm = torch.diag(dot_product)

        # Compute the pairwise distance matrix as we have:
        # ||a - b||^2 = ||a||^2  - 2 <a, b> + ||b||^2
        # shape (batch_size, batch_size)
        distances = square_norm.unsqueeze(0) - 2.0 * dot_product + square_norm.unsqueeze(1)

        # Because of computation errors, some distances might be negative so we put everything >= 0.0
        distances[distances < 0] = 0

        if not squared:
            # Because the gradient of sqrt is infinite when distances == 0.0 (ex: on the diagonal)
            # we need to add a small epsilon where distances == 0.0
            mask = distances.eq(0).float()
            distances = distances + mask * 1e-16

            distances = (1.0 - mask) * torch.sqrt(distances)

        return distances


def get_triplet_mask(labels):
    """Return a 3D mask where mask[a, p, n] is True iff the triplet (a, p, n) is valid."""
    # Check that i, j and k are distinct
    indices_equal = torch.eye(labels.size(0), device=labels.device).bool()
    indices_not_equal = ~indices_equal
    i_not_equal_j = indices_not_equal.unsqueeze(2)
    i_not_equal_k = indices_not_equal.unsqueeze(1)
    j_not_equal_k = indices_not_equal.unsqueeze(0)

    distinct_indices = (i_not_equal_j & i_not_equal_k) & j_not_equal_k

    label_equal = labels.unsqueeze(0) == labels.unsqueeze(1)
    i_equal_j = label_equal.unsqueeze(2)
    i_equal_k = label_equal.unsqueeze(1)

    valid_labels = ~i_equal_k & i_equal_j

    return valid_labels & distinct_indices


class BatchAllTripletLoss(nn.Module):
    def __init__(self, distance_metric=BatchHardTripletLossDistanceFunction.eucledian_distance, margin: float = 5):
        super(BatchAllTripletLoss, self).__init__()
        self.triplet_margin = margin
        self.distance_metric = distance_metric

    def forward(self, labels, embeddings):
        return self.batch_all_triplet_loss(labels, embeddings)

    def batch_all_triplet_loss(self, labels, embeddings):
        # Get the pairwise distance matrix
        pairwise_dist = self.distance_metric(embeddings)

        anchor_positive_dist = pairwise_dist.unsqueeze(2)
        anchor_negative_dist = pairwise_dist.unsqueeze(1)

        # Compute a 3D tensor of size (batch_size, batch_size, batch_size)
        # triplet_loss[i, j, k] will contain the triplet loss of anchor=i, positive=j, negative=k
        # Uses broadcasting where the 1st argument has shape (batch_size, batch_size, 1)
        # and the 2nd (batch_size, 1, batch_size)
        triplet_loss = anchor_positive_dist - anchor_negative_dist + self.triplet_margin

        # Put to zero the invalid triplets
        # (where label(a) != label(p) or label(n) == label(a) or a == p)
        mask = get_triplet_mask(labels)
        triplet_loss = mask.float() * triplet_loss

        # Remove negative losses (i.e. the easy triplets)
        triplet_loss[triplet_loss < 0] = 0

        # Count number of positive triplets (where triplet_loss > 0)
        valid_triplets = triplet_loss[triplet_loss > 1e-16]
        num_positive_triplets = valid_triplets.size(0)
        # num_valid_triplets = mask.sum()
        # fraction_positive_triplets = num_positive_triplets / (num_valid_triplets.float() + 1e-16)

        # Get final mean triplet loss over the positive valid triplets
        triplet_loss = triplet_loss.sum() / (num_positive_triplets + 1e-16)

        return triplet_loss


def make():
    return BatchAllTripletLoss()


def _case(g, labels, spread=1.0):
    labels = torch.tensor(labels)
    centers = torch.randn(int(labels.max()) + 1, 4, generator=g) * spread
    emb = centers[labels] + 0.3 * torch.randn(len(labels), 4, generator=g)
    return (labels, emb)


def inputs():
    g = torch.Generator().manual_seed(5)
    return [
        _case(g, [0, 0, 1, 1]),
        _case(g, [0, 1, 0, 1, 2, 2]),
        _case(g, [0, 0, 1, 1, 2, 2, 3, 3]),
        _case(g, [0, 1, 2]),                        # no valid triplet: 0 / 1e-16
        _case(g, [0, 0, 1, 1], spread=20.0),        # far clusters: all triplets easy, loss 0
        _case(g, [0, 0, 0, 1, 1], spread=2.2),      # some triplets easy
        _case(g, [1, 1, 1]),                        # one class only: no negative
        _case(g, [0, 0, 1, 2, 2, 1, 0], spread=2.0),
    ]
