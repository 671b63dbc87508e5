"""pytorch-metric-learning NTXentLoss (SimCLR / InfoNCE) over all pairs in a batch: BaseMetricLossFunction.forward
-> GenericPairLoss.compute_loss/pair_based_loss -> NTXentLoss._compute_loss -> MeanReducer, with the
CosineSimilarity distance, in front of a tiny embedding trunk.

Source: https://github.com/KevinMusgrave/pytorch-metric-learning/blob/master/src/pytorch_metric_learning/losses/ntxent_loss.py
        https://github.com/KevinMusgrave/pytorch-metric-learning/blob/master/src/pytorch_metric_learning/losses/generic_pair_loss.py
        https://github.com/KevinMusgrave/pytorch-metric-learning/blob/master/src/pytorch_metric_learning/utils/loss_and_miner_utils.py
        https://github.com/KevinMusgrave/pytorch-metric-learning/blob/master/src/pytorch_metric_learning/reducers/base_reducer.py
        https://github.com/KevinMusgrave/pytorch-metric-learning/blob/master/src/pytorch_metric_learning/distances/base_distance.py
Breaks: `a1_idx, p_idx = torch.where(matches)` / `torch.where(diffs)` in get_all_pairs_indices (nonzero:
        data-dependent shape), then `len(x) <= 1` / `len(a1) > 0` on those index tensors and the boolean-mask
        assignment `neg_pairs[n_per_p == 0] = c_f.neg_inf(dtype)`. Stats collection, embedding regularizers
        and the reducer's bookkeeping are dropped; the reducer is MeanReducer (torch.mean over pos pairs).
HAND: yes — a dense formulation over the N x N label-match masks: per (anchor, positive) the same max-shifted
      log-softmax against that anchor's negatives, averaged over the positive mask; the two "zero loss" cases
      (`len(x) <= 1` for all index tensors, or no positive / no negative pair) are selected with torch.where and
      give `torch.sum(embeddings * 0)`. Same values and gradients.
"""
import torch

KIND = "nonzero pair indices (metric learning loss)"
GRAD = True


# ---- utils/common_functions.py (reduced) ----
def neg_inf(dtype):
    return torch.finfo(dtype).min


def small_val(dtype):
    return torch.finfo(dtype).tiny


def to_dtype(x, tensor=None, dtype=None):
    dt = dtype if dtype is not None else tensor.dtype
    if x.dtype != dt:
        x = x.type(dt)
    return x


def zero_loss():
    return {"losses": 0, "indices": None, "reduction_type": "already_reduced"}


# ---- utils/loss_and_miner_utils.py ----
def get_matches_and_diffs(labels, ref_labels=None):
    if ref_labels is None:
        ref_labels = labels
    labels1 = labels.unsqueeze(1)
    labels2 = ref_labels.unsqueeze(0)
    matches = (labels1 == labels2).byte()
    diffs = matches ^ 1
    if ref_labels is labels:
        matches.fill_diagonal_(0)
    return matches, diffs


def get_all_pairs_indices(labels, ref_labels=None):
    """
    Given a tensor of labels, this will return 4 tensors.
    The first 2 tensors are the indices which form all positive pairs
    The second 2 tensors are the indices which form all negative pairs
    """
    matches, diffs = get_matches_and_diffs(labels, ref_labels)
    a1_idx, p_idx = torch.where(matches)
    a2_idx, n_idx = torch.where(diffs)
    return a1_idx, p_idx, a2_idx, n_idx


def convert_to_pairs(indices_tuple, labels, ref_labels=None):
    if indices_tuple is None:
        return get_all_pairs_indices(labels, ref_labels)
    elif len(indices_tuple) == 4:
        return indices_tuple
    else:
        a, p, n = indices_tuple
        return a, p, a, n


# ---- distances/cosine_similarity.py ----
class CosineSimilarity(torch.nn.Module):
    is_inverted = True

    def forward(self, query_emb, ref_emb=None):
        query_emb_normalized = torch.nn.functional.normalize(query_emb, p=2, dim=1)
        if ref_emb is None:
            ref_emb = query_emb
            ref_emb_normalized = query_emb_normalized
        else:
            ref_emb_normalized = torch.nn.functional.normalize(ref_emb, p=2, dim=1)
        mat = torch.matmul(query_emb_normalized, ref_emb_normalized.t())
        assert mat.size() == torch.Size((query_emb.size(0), ref_emb.size(0)))
        return mat


# ---- reducers/mean_reducer.py + base_reducer.py (reduced) ----
class MeanReducer(torch.nn.Module):
    def forward(self, loss_dict, embeddings, labels):
        assert len(loss_dict) == 1
        loss_name = list(loss_dict.keys())[0]
        loss_info = loss_dict[loss_name]
        losses, loss_indices, reduction_type = loss_info["losses"], loss_info["indices"], loss_info["reduction_type"]
        if (not torch.is_tensor(losses)) and (losses == 0):
            return torch.sum(embeddings * 0)
        assert reduction_type == "pos_pair"
        assert losses.ndim == 1
        return torch.mean(losses)


# ---- losses/generic_pair_loss.py + ntxent_loss.py ----
class NTXentLoss(torch.nn.Module):
    def __init__(self, temperature=0.07):
        super().__init__()
        self.temperature = temperature
        self.distance = CosineSimilarity()
        self.reducer = MeanReducer()
        self.loss_method = self.pair_based_loss

    def zero_losses(self):
        return {"loss": zero_loss()}

    def forward(self, embeddings, labels=None, indices_tuple=None, ref_emb=None, ref_labels=None):
        if labels is not None and embeddings.shape[0] != labels.shape[0]:
            raise ValueError("Number of embeddings must equal number of labels")
        if ref_emb is None:
            ref_emb, ref_labels = embeddings, labels
        loss_dict = self.compute_loss(embeddings, labels, indices_tuple, ref_emb, ref_labels)
        return self.reducer(loss_dict, embeddings, labels)

    def compute_loss(self, embeddings, labels, indices_tuple, ref_emb, ref_labels):
        indices_tuple = convert_to_pairs(indices_tuple, labels, ref_labels)
        if all(len(x) <= 1 for x in indices_tuple):
            return self.zero_losses()
        mat = self.distance(embeddings, ref_emb)
        return self.loss_method(mat, indices_tuple)

    def pair_based_loss(self, mat, indices_tuple):
        a1, p, a2, n = indices_tuple
        pos_pair, neg_pair = [], []
        if len(a1) > 0:
            pos_pair = mat[a1, p]
        if len(a2) > 0:
            neg_pair = mat[a2, n]
        return self._compute_loss(pos_pair, neg_pair, indices_tuple)

    def _compute_loss(self, pos_pairs, neg_pairs, indices_tuple):
        a1, p, a2, _ = indices_tuple

        if len(a1) > 0 and len(a2) > 0:
            dtype = neg_pairs.dtype
            # if dealing with actual distances, use negative distances
            if not self.distance.is_inverted:
                pos_pairs = -pos_pairs
                neg_pairs = -neg_pairs

            pos_pairs = pos_pairs.unsqueeze(1) / self.temperature
            neg_pairs = neg_pairs / self.temperature
            n_per_p = to_dtype(a2.unsqueeze(0) == a1.unsqueeze(1), dtype=dtype)
            neg_pairs = neg_pairs * n_per_p
            neg_pairs[n_per_p == 0] = neg_inf(dtype)

            max_val = torch.max(
                pos_pairs, torch.max(neg_pairs, dim=1, keepdim=True)[0]
            ).detach()
            numerator = torch.exp(pos_pairs - max_val).squeeze(1)
            denominator = torch.sum(torch.exp(neg_pairs - max_val), dim=1) + numerator
            log_exp = torch.log((numerator / denominator) + small_val(dtype))
            return {
                "loss": {
                    "losses": -log_exp,
                    "indices": (a1, p),
                    "reduction_type": "pos_pair",
                }
            }
        return self.zero_losses()


class EmbedAndLoss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Linear(6, 4)
        self.loss_func = NTXentLoss(temperature=0.5)

    def forward(self, x, labels):
        return self.loss_func(self.trunk(x), labels)


def make():
    torch.manual_seed(0)
    return EmbedAndLoss()


def inputs():
    g = torch.Generator().manual_seed(0)
    label_sets = [
        [0, 0, 1, 1],             # SimCLR-style two views
        [0, 1, 0, 1, 2, 2],
        [0, 0, 0, 1],
        [3, 1, 3, 1, 1, 2, 2],
        [0, 1, 2, 3],             # no positive pair -> zero loss
        [5, 5, 5],                # no negative pair -> zero loss
        [0, 1],                   # len(x) <= 1 for all -> zero loss
        [0, 0],                   # one positive pair each way, no negatives
        [2, 0, 2, 0, 1],
    ]
    out = []
    for labels in label_sets:
        x = torch.randn(len(labels), 6, generator=g)
        out.append((x, torch.tensor(labels)))
    return out
