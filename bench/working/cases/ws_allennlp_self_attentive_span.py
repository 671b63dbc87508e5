"""AllenNLP `SelfAttentiveSpanExtractor`: attention-pooled span embeddings built on
`util.batched_span_select` -> `batched_index_select` -> `flatten_and_batch_shift_indices`.

Sources: https://github.com/allenai/allennlp/blob/main/allennlp/modules/span_extractors/self_attentive_span_extractor.py
and https://github.com/allenai/allennlp/blob/main/allennlp/nn/util.py (batched_span_select,
batched_index_select, flatten_and_batch_shift_indices, masked_softmax, weighted_sum, get_range_vector,
get_device_of). `TimeDistributed(Linear)` is reduced to `Linear` (same result on 3-D input).

Breaks: `max_batch_span_width = span_widths.max().item() + 1` (`Tensor.item()` used as a size) and
`if torch.max(indices) >= sequence_length or torch.min(indices) < 0:` (data-dependent check that
raises ConfigurationError).

HAND: the span window is given its static upper bound `target.size(1)` instead of the batch's widest
span (the extra window positions are masked out, so `masked_softmax`/`weighted_sum` give the same
pooled embeddings); the range check runs in an ordered custom op that raises the same
ConfigurationError at run time.
"""
import torch
from torch import nn

KIND = ".item() as size + value check"
GRAD = True


class ConfigurationError(Exception):
    def __init__(self, message):
        super().__init__()
        self.message = message

    def __str__(self):
        return self.message


def get_device_of(tensor):
    if not tensor.is_cuda:
        return -1
    else:
        return tensor.get_device()


def get_range_vector(size, device):
    if device > -1:
        return torch.cuda.LongTensor(size, device=device).fill_(1).cumsum(0) - 1
    else:
        return torch.arange(0, size, dtype=torch.long)


def tiny_value_of_dtype(dtype):
    if not dtype.is_floating_point:
        raise TypeError("Only supports floating point dtypes.")
    if dtype == torch.float or dtype == torch.double:
        return 1e-13
    elif dtype == torch.half:
        return 1e-4
    else:
        raise TypeError("Does not support dtype " + str(dtype))


def masked_softmax(vector, mask, dim=-1):
    if mask is None:
        result = torch.nn.functional.softmax(vector, dim=dim)
    else:
        while mask.dim() < vector.dim():
            mask = mask.unsqueeze(1)
        # To limit numerical errors from large vector elements outside the mask, we zero these out.
        result = torch.nn.functional.softmax(vector * mask, dim=dim)
        result = result * mask
        result = result / (result.sum(dim=dim, keepdim=True) + tiny_value_of_dtype(result.dtype))
    return result


def weighted_sum(matrix, attention):
    if attention.dim() == 2 and matrix.dim() == 3:
        return attention.unsqueeze(1).bmm(matrix).squeeze(1)
    if attention.dim() == 3 and matrix.dim() == 3:
        return attention.bmm(matrix)
    if matrix.dim() - 1 < attention.dim():
        expanded_size = list(matrix.size())
        for i in range(attention.dim() - matrix.dim() + 1):
            matrix = matrix.unsqueeze(1)
            expanded_size.insert(i + 1, attention.size(i + 1))
        matrix = matrix.expand(*expanded_size)
    intermediate = attention.unsqueeze(-1).expand_as(matrix) * matrix
    return intermediate.sum(dim=-2)


def flatten_and_batch_shift_indices(indices, sequence_length):
    # Shape: (batch_size)
    if torch.max(indices) >= sequence_length or torch.min(indices) < 0:
        raise ConfigurationError(f"All elements in indices should be in range (0, {sequence_length - 1})")
    offsets = get_range_vector(indices.size(0), get_device_of(indices)) * sequence_length
    for _ in range(len(indices.size()) - 1):
        offsets = offsets.unsqueeze(1)

    # Shape: (batch_size, d_1, ..., d_n)
    offset_indices = indices + offsets

    # Shape: (batch_size * d_1 * ... * d_n)
    offset_indices = offset_indices.view(-1)
    return offset_indices


def batched_index_select(target, indices, flattened_indices=None):
    if flattened_indices is None:
        # Shape: (batch_size * d_1 * ... * d_n)
        flattened_indices = flatten_and_batch_shift_indices(indices, target.size(1))

    # Shape: (batch_size * sequence_length, embedding_size)
    flattened_target = target.view(-1, target.size(-1))

    # Shape: (batch_size * d_1 * ... * d_n, embedding_size)
    flattened_selected = flattened_target.index_select(0, flattened_indices)
    selected_shape = list(indices.size()) + [target.size(-1)]
    # Shape: (batch_size, d_1, ..., d_n, embedding_size)
    selected_targets = flattened_selected.view(*selected_shape)
    return selected_targets


def batched_span_select(target, spans):
    # both of shape (batch_size, num_spans, 1)
    span_starts, span_ends = spans.split(1, dim=-1)

    # shape (batch_size, num_spans, 1)
    # These span widths are off by 1, because the span ends are `inclusive`.
    span_widths = span_ends - span_starts

    # We need to know the maximum span width so we can
    # generate indices to extract the spans from the sequence tensor.
    max_batch_span_width = span_widths.max().item() + 1

    # Shape: (1, 1, max_batch_span_width)
    max_span_range_indices = get_range_vector(max_batch_span_width, get_device_of(target)).view(1, 1, -1)
    # Shape: (batch_size, num_spans, max_batch_span_width)
    span_mask = max_span_range_indices <= span_widths
    raw_span_indices = span_starts + max_span_range_indices
    # We also don't want to include span indices which greater than the sequence_length,
    span_mask = span_mask & (raw_span_indices < target.size(1)) & (0 <= raw_span_indices)
    span_indices = raw_span_indices * span_mask

    # Shape: (batch_size, num_spans, max_batch_span_width, embedding_dim)
    span_embeddings = batched_index_select(target, span_indices)

    return span_embeddings, span_mask


class SelfAttentiveSpanExtractor(nn.Module):
    def __init__(self, input_dim):
        super().__init__()
        self._input_dim = input_dim
        self._global_attention = nn.Linear(input_dim, 1)

    def forward(self, sequence_tensor, span_indices, sequence_mask=None, span_indices_mask=None):
        span_embeddings = self._embed_spans(sequence_tensor, span_indices, sequence_mask, span_indices_mask)
        if span_indices_mask is not None:
            return span_embeddings * span_indices_mask.unsqueeze(-1)
        return span_embeddings

    def _embed_spans(self, sequence_tensor, span_indices, sequence_mask=None, span_indices_mask=None):
        # shape (batch_size, sequence_length, 1)
        global_attention_logits = self._global_attention(sequence_tensor)

        # shape (batch_size, sequence_length, embedding_dim + 1)
        concat_tensor = torch.cat([sequence_tensor, global_attention_logits], -1)

        concat_output, span_mask = batched_span_select(concat_tensor, span_indices)

        # Shape: (batch_size, num_spans, max_batch_span_width, embedding_dim)
        span_embeddings = concat_output[:, :, :, :-1]
        # Shape: (batch_size, num_spans, max_batch_span_width)
        span_attention_logits = concat_output[:, :, :, -1]

        # Shape: (batch_size, num_spans, max_batch_span_width)
        span_attention_weights = masked_softmax(span_attention_logits, span_mask)

        # Do a weighted sum of the embedded spans with
        # respect to the normalised attention distributions.
        # Shape: (batch_size, num_spans, embedding_dim)
        attended_text_embeddings = weighted_sum(span_embeddings, span_attention_weights)

        return attended_text_embeddings


def make():
    torch.manual_seed(0)
    return SelfAttentiveSpanExtractor(4)


def inputs():
    torch.manual_seed(0)
    seq = torch.randn(2, 6, 4)
    spans = torch.tensor([[[0, 2], [1, 1], [3, 5]], [[2, 4], [0, 0], [5, 5]]])
    single = torch.tensor([[[0, 0], [1, 1], [2, 2]], [[3, 3], [4, 4], [5, 5]]])
    whole = torch.tensor([[[0, 5]], [[0, 5]]])
    mask = torch.tensor([[True, True, False], [True, False, True]])
    return [
        (seq, spans),
        (seq, single),
        (seq, whole),
        (seq, spans, None, mask),
        (torch.randn(1, 3, 4), torch.tensor([[[0, 1], [2, 2]]])),
        (torch.randn(3, 5, 4), torch.tensor([[[1, 3]], [[0, 4]], [[2, 2]]])),
        (seq, torch.tensor([[[4, 5], [0, 1]], [[1, 2], [3, 3]]])),
        (torch.randn(2, 6, 4), spans),
    ]
