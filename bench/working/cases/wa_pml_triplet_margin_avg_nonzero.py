"""pytorch-metric-learning's `TripletMarginLoss` with its default `AvgNonZeroReducer`, on all
triplets of the batch (`triplets_per_anchor="all"`, the default) and `LpDistance` (the default).

Source: https://github.com/KevinMusgrave/pytorch-metric-learning/blob/master/src/pytorch_metric_learning/losses/triplet_margin_loss.py
https://github.com/KevinMusgrave/pytorch-metric-learning/blob/master/src/pytorch_metric_learning/reducers/threshold_reducer.py
https://github.com/KevinMusgrave/pytorch-metric-learning/blob/master/src/pytorch_metric_learning/reducers/base_reducer.py
https://github.com/KevinMusgrave/pytorch-metric-learning/blob/master/src/pytorch_metric_learning/utils/loss_and_miner_utils.py
https://github.com/KevinMusgrave/pytorch-metric-learning/blob/master/src/pytorch_metric_learning/distances/base_distance.py
(records/stats machinery reduced to `collect_stats=False`, the library default; the random-triplet
sampling of an integer `triplets_per_anchor` and the embedding regularizers are left out).

Breaks: `torch.where(triplets)` in `get_all_triplets_indices_vectorized_method` (nonzero: a
data-dependent number of triplets), `if len(anchor_idx) == 0`, and in
`ThresholdReducer.element_reduction_helper` the boolean-mask gather `losses = losses[low_condition]`
with `if num_past_filter >= 1` on its length.

HAND: with labels, the loss is computed for every (anchor, positive, negative) cell of a dense
`B x B x R` grid and the triplet mask is carried to the reducer instead of the index lists; the
reducer averages with masked sums (`where(keep, losses, 0).sum() / count`) and picks the zero loss
with `torch.where(count >= 1, ...)`. With an explicit `indices_tuple` the gather stays (its length is
the input's) and only the reducer is masked.
"""

import torch

KIND = "nonzero-mask-branch"
GRAD = True


# -- utils/common_functions.py -------------------------------------------------------------------
def check_shapes(embeddings, labels):
    if labels is not None and embeddings.shape[0] != labels.shape[0]:
        raise ValueError("Number of embeddings must equal number of labels")
    if labels is not None and labels.ndim != 1:
        raise ValueError("labels must be a 1D tensor of shape (batch_size,)")


def to_device(x, tensor=None, device=None, dtype=None):
    dv = device if device is not None else tensor.device
    if x.device != dv:
        x = x.to(dv)
    return x


def set_ref_emb(embeddings, labels, ref_emb, ref_labels):
    if ref_emb is not None:
        if ref_labels is not None:
            ref_labels = to_device(ref_labels, ref_emb)
    else:
        ref_emb, ref_labels = embeddings, labels
    check_shapes(ref_emb, ref_labels)
    return ref_emb, ref_labels


def labels_or_indices_tuple_required(labels, indices_tuple):
    if labels is None and indices_tuple is None:
        raise ValueError("labels and indices_tuple cannot both be None")


# -- utils/loss_and_miner_utils.py ---------------------------------------------------------------
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


def get_all_triplets_indices(labels, ref_labels=None):
    all_matches, all_diffs = get_matches_and_diffs(labels, ref_labels)

    if (
        all_matches.shape[0] * all_matches.shape[1] * all_matches.shape[1]
        < torch.iinfo(torch.int32).max
    ):
        # torch.nonzero is not supported for tensors with more than INT_MAX elements
        return get_all_triplets_indices_vectorized_method(all_matches, all_diffs)
    raise NotImplementedError("loop method left out of this case")


def get_all_triplets_indices_vectorized_method(all_matches, all_diffs):
    triplets = all_matches.unsqueeze(2) * all_diffs.unsqueeze(1)
    return torch.where(triplets)


def convert_to_triplets(indices_tuple, labels, ref_labels=None, t_per_anchor=100):
    if indices_tuple is None:
        if t_per_anchor == "all":
            return get_all_triplets_indices(labels, ref_labels)
        raise NotImplementedError("random triplets left out of this case")
    elif len(indices_tuple) == 3:
        return indices_tuple
    raise NotImplementedError("pairs to triplets left out of this case")


# -- distances ------------------------------------------------------------------------------------
class LpDistance(torch.nn.Module):
    def __init__(self, normalize_embeddings=True, p=2, power=1):
        super().__init__()
        self.normalize_embeddings = normalize_embeddings
        self.p = p
        self.power = power
        self.is_inverted = False

    def forward(self, query_emb, ref_emb=None):
        self.check_shapes(query_emb, ref_emb)
        query_emb_normalized = self.maybe_normalize(query_emb)
        if ref_emb is None:
            ref_emb = query_emb
            ref_emb_normalized = query_emb_normalized
        else:
            ref_emb_normalized = self.maybe_normalize(ref_emb)
        mat = self.compute_mat(query_emb_normalized, ref_emb_normalized)
        if self.power != 1:
            mat = mat**self.power
        assert mat.size() == torch.Size((query_emb.size(0), ref_emb.size(0)))
        return mat

    def compute_mat(self, query_emb, ref_emb):
        if ref_emb is None:
            ref_emb = query_emb
        return torch.cdist(query_emb, ref_emb, p=self.p)

    def smallest_dist(self, *args, **kwargs):
        if self.is_inverted:
            return torch.max(*args, **kwargs)
        return torch.min(*args, **kwargs)

    # This measures the margin between x and y
    def margin(self, x, y):
        if self.is_inverted:
            return y - x
        return x - y

    def maybe_normalize(self, embeddings, dim=1, **kwargs):
        if self.normalize_embeddings:
            return torch.nn.functional.normalize(embeddings, p=self.p, dim=dim, **kwargs)
        return embeddings

    def check_shapes(self, query_emb, ref_emb):
        if query_emb.ndim != 2 or (ref_emb is not None and ref_emb.ndim != 2):
            raise ValueError(
                "embeddings must be a 2D tensor of shape (batch_size, embedding_size)"
            )


# -- reducers -------------------------------------------------------------------------------------
class BaseReducer(torch.nn.Module):
    collect_stats = False

    def forward(self, loss_dict, embeddings, labels):
        assert len(loss_dict) == 1
        loss_name = list(loss_dict.keys())[0]
        loss_info = loss_dict[loss_name]
        losses, loss_indices, reduction_type = (
            loss_info["losses"],
            loss_info["indices"],
            loss_info["reduction_type"],
        )
        return self.reduce_the_loss(losses, loss_indices, reduction_type, {}, embeddings, labels)

    def reduce_the_loss(self, losses, loss_indices, reduction_type, kwargs, embeddings, labels):
        if self.input_is_zero_loss(losses):
            return self.zero_loss(embeddings)
        self.assert_sizes(losses, loss_indices, reduction_type)
        reduction_func = self.get_reduction_func(reduction_type)
        return reduction_func(losses, loss_indices, embeddings, labels, **kwargs)

    def already_reduced_reduction(self, losses, loss_indices, embeddings, labels):
        assert losses.ndim == 0 or len(losses) == 1
        return losses

    def get_reduction_func(self, reduction_type):
        return getattr(self, "{}_reduction".format(reduction_type))

    def assert_sizes(self, losses, loss_indices, reduction_type):
        getattr(self, "assert_sizes_{}".format(reduction_type))(losses, loss_indices)

    def zero_loss(self, embeddings):
        return torch.sum(embeddings * 0)

    def input_is_zero_loss(self, losses):
        if (not torch.is_tensor(losses)) and (losses == 0):
            return True
        return False

    def assert_sizes_already_reduced(self, losses, loss_indices):
        pass

    def assert_sizes_triplet(self, losses, loss_indices):
        assert torch.is_tensor(losses)
        assert isinstance(loss_indices, (list, tuple))
        assert len(loss_indices) == 3
        assert all(len(x) == len(losses) for x in loss_indices)


class ThresholdReducer(BaseReducer):
    def __init__(self, low=None, high=None):
        super().__init__()
        assert (low is not None) or (high is not None), "At least one of low or high must be specified"
        self.low = low
        self.high = high

    def triplet_reduction(self, losses, loss_indices, embeddings, labels):
        return self.element_reduction_helper(losses, embeddings)

    def element_reduction_helper(self, losses, embeddings):
        low_condition, high_condition = None, None
        if self.low is not None:
            low_condition = losses > self.low
            losses = losses[low_condition]
        if self.high is not None:
            high_condition = losses < self.high
            losses = losses[high_condition]
        num_past_filter = len(losses)
        if num_past_filter >= 1:
            loss = torch.mean(losses)
        else:
            loss = self.zero_loss(embeddings)
        self.set_stats(low_condition, high_condition, num_past_filter)
        return loss

    def set_stats(self, low_condition, high_condition, num_past_filter):
        if self.collect_stats:
            self.num_past_filter = num_past_filter
            with torch.no_grad():
                if self.low is not None:
                    self.num_above_low = torch.sum(low_condition).item()
                if self.high is not None:
                    self.num_above_high = torch.sum(high_condition).item()


class AvgNonZeroReducer(ThresholdReducer):
    def __init__(self):
        super().__init__(low=0)


# -- losses/triplet_margin_loss.py ----------------------------------------------------------------
class TripletMarginLoss(torch.nn.Module):
    def __init__(self, margin=0.05, swap=False, smooth_loss=False, triplets_per_anchor="all"):
        super().__init__()
        self.margin = margin
        self.swap = swap
        self.smooth_loss = smooth_loss
        self.triplets_per_anchor = triplets_per_anchor
        self.distance = LpDistance(p=2)
        self.reducer = AvgNonZeroReducer()

    def compute_loss(self, embeddings, labels, indices_tuple, ref_emb, ref_labels):
        labels_or_indices_tuple_required(labels, indices_tuple)
        indices_tuple = convert_to_triplets(
            indices_tuple, labels, ref_labels, t_per_anchor=self.triplets_per_anchor
        )
        anchor_idx, positive_idx, negative_idx = indices_tuple
        if len(anchor_idx) == 0:
            return self.zero_losses()
        mat = self.distance(embeddings, ref_emb)
        ap_dists = mat[anchor_idx, positive_idx]
        an_dists = mat[anchor_idx, negative_idx]
        if self.swap:
            pn_dists = mat[positive_idx, negative_idx]
            an_dists = self.distance.smallest_dist(an_dists, pn_dists)

        current_margins = self.distance.margin(ap_dists, an_dists)
        violation = current_margins + self.margin
        if self.smooth_loss:
            loss = torch.nn.functional.softplus(violation)
        else:
            loss = torch.nn.functional.relu(violation)

        return {
            "loss": {
                "losses": loss,
                "indices": indices_tuple,
                "reduction_type": "triplet",
            }
        }

    def forward(self, embeddings, labels=None, indices_tuple=None, ref_emb=None, ref_labels=None):
        check_shapes(embeddings, labels)
        if labels is not None:
            labels = to_device(labels, embeddings)
        ref_emb, ref_labels = set_ref_emb(embeddings, labels, ref_emb, ref_labels)
        loss_dict = self.compute_loss(embeddings, labels, indices_tuple, ref_emb, ref_labels)
        return self.reducer(loss_dict, embeddings, labels)

    def zero_loss(self):
        return {"losses": 0, "indices": None, "reduction_type": "already_reduced"}

    def zero_losses(self):
        return {"loss": self.zero_loss()}


def make():
    torch.manual_seed(0)
    return TripletMarginLoss(margin=0.1)


def inputs():
    g = torch.Generator().manual_seed(11)
    emb = lambda n, d: torch.randn(n, d, generator=g)
    lab = lambda *v: torch.tensor(v, dtype=torch.long)

    # two tight, well-separated clusters: triplets exist but none violates the margin
    centres = torch.tensor([[4.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
    tight = centres.repeat_interleave(3, 0) + 0.01 * torch.randn(6, 3, generator=g)

    dup = emb(5, 3)
    dup[3] = dup[0]                                  # a duplicated embedding (zero distance)
    a, p, n = lab(0, 1, 2, 3), lab(1, 0, 3, 2), lab(4, 5, 5, 4)
    return [
        (emb(8, 4), lab(0, 0, 1, 1, 2, 2, 0, 1)),
        (emb(6, 4), lab(3, 3, 3, 3, 3, 3)),          # one class: no negatives, no triplets
        (emb(5, 4), lab(0, 1, 2, 3, 4)),             # all distinct: no positives, no triplets
        (tight, lab(0, 0, 0, 1, 1, 1)),              # triplets, all losses zero
        (emb(12, 6), torch.randint(0, 2, (12,), generator=g)),
        (emb(3, 2), lab(0, 0, 1)),                   # exactly two triplets
        (dup, lab(0, 1, 1, 0, 1)),
        (emb(6, 4), None, (a, p, n)),                # triplets from a miner, no labels
        (emb(6, 4), None, (lab(), lab(), lab())),    # a miner that found nothing
        (emb(4, 4), lab(0, 1, 0, 1), None, emb(7, 4), lab(0, 1, 2, 0, 1, 2, 0)),  # reference set
    ]
