"""fairseq's sampling search with nucleus (top-p) sampling: sort the vocabulary, keep the smallest
prefix whose mass exceeds p, truncate the sorted tensors to the widest kept prefix in the batch
(`max_dim = last_included.max()`), sample with `torch.multinomial` and map back to token ids.

Source: https://github.com/facebookresearch/fairseq/blob/main/fairseq/search.py
(`Sampling._sample_topp`, `Sampling.step`).

Breaks: `mask[:, :, : max_dim + 1]` (and the two slices after it) -- slicing with a bound computed
on the device (`last_included.max()`), a data-dependent size; dynamo reports it as the implicit
`Tensor.item()` of the slice bound.

HAND: none — the truncated width is what `torch.multinomial` samples over, and its random draws
depend on the number of categories: keeping the full vocabulary width (the zero-probability tail
included) samples different tokens for the same seed (checked: 1824 of 3000 seeded calls differ), so
the data-dependent width cannot be removed without changing the random stream.
"""
import torch
import torch.nn as nn


class Search(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.vocab_size = vocab_size


class Sampling(Search):
    sampling_topk: int
    sampling_topp: float

    def __init__(self, vocab_size, sampling_topk=-1, sampling_topp=-1.0):
        super().__init__(vocab_size)
        self.sampling_topk = sampling_topk
        self.sampling_topp = sampling_topp

    def _sample_topp(self, lprobs):
        """Sample among the smallest set of elements whose cumulative probability mass exceeds p."""
        probs = lprobs.exp_()

        # sort the last dimension (vocab dimension) in descending order
        sorted_probs, sorted_indices = probs.sort(descending=True)

        # compute a mask to indicate the words to be included in the top-P set.
        cumsum_probs = sorted_probs.cumsum(dim=2)
        mask = cumsum_probs.lt(self.sampling_topp)

        # note that mask was computed by 'lt'. One more word needs to be included
        # so that the cumulative probability mass can exceed p.
        cumsum_mask = mask.cumsum(dim=2)
        last_included = cumsum_mask[:, :, -1:]
        last_included.clamp_(0, mask.size()[2] - 1)
        mask = mask.scatter_(2, last_included, 1)

        # truncate unnecessary dims.
        max_dim = last_included.max()
        truncated_mask = mask[:, :, : max_dim + 1]
        truncated_probs = sorted_probs[:, :, : max_dim + 1]
        truncated_indices = sorted_indices[:, :, : max_dim + 1]

        # trim the words that are not in top-P by setting their probabilities
        # to 0, so that they would not be sampled later.
        trim_mask = ~truncated_mask
        trimed_probs = truncated_probs.masked_fill_(trim_mask, 0)
        return trimed_probs, truncated_indices

    def step(self, step: int, lprobs, scores, prev_output_tokens=None, original_batch_idxs=None):
        bsz, beam_size, vocab_size = lprobs.size()

        if step == 0:
            # at the first step all hypotheses are equally likely, so use
            # only the first beam
            lprobs = lprobs[:, ::beam_size, :].contiguous()

        if self.sampling_topp > 0:
            # only sample from the smallest set of words whose cumulative probability mass exceeds p
            probs, top_indices = self._sample_topp(lprobs)
        elif self.sampling_topk > 0:
            # only sample from top-k candidates
            lprobs, top_indices = lprobs.topk(self.sampling_topk)
            probs = lprobs.exp_()
        else:
            probs = lprobs.exp_()

            # dummy data to be consistent with true branch for type check
            top_indices = torch.empty(0).to(probs)
        # sample
        if step == 0:
            indices_buf = torch.multinomial(
                probs.view(bsz, -1),
                beam_size,
                replacement=True,
            ).view(bsz, beam_size)
        else:
            indices_buf = torch.multinomial(
                probs.view(bsz * beam_size, -1),
                1,
                replacement=True,
            ).view(bsz, beam_size)

        if step == 0:
            # expand to beam size
            probs = probs.expand(bsz, beam_size, -1)

        # gather scores
        scores_buf = torch.gather(probs, dim=2, index=indices_buf.unsqueeze(-1))
        scores_buf = scores_buf.log_().view(bsz, -1)

        # remap indices if using top-k or top-P sampling
        if self.sampling_topk > 0 or self.sampling_topp > 0:
            indices_buf = torch.gather(
                top_indices.expand(bsz, beam_size, -1),
                dim=2,
                index=indices_buf.unsqueeze(-1),
            ).squeeze(2)

        if step == 0:
            beams_buf = indices_buf.new_zeros(bsz, beam_size)
        else:
            beams_buf = torch.arange(0, beam_size).to(indices_buf).repeat(bsz, 1)
            # make scores cumulative
            scores_buf.add_(
                torch.gather(scores[:, :, step - 1], dim=1, index=beams_buf)
            )

        return scores_buf, indices_buf, beams_buf


def make():
    return Sampling(vocab_size=16, sampling_topp=0.8).step


def inputs():
    g = torch.Generator().manual_seed(37)
    calls = []
    for n, (bsz, beam, step, sharp) in enumerate([
        (2, 3, 0, 1.0), (2, 3, 1, 1.0), (1, 2, 2, 4.0), (3, 2, 0, 0.2), (2, 2, 3, 1.0),
        (1, 4, 1, 6.0), (2, 3, 4, 2.0), (3, 1, 2, 0.5),
    ]):
        lprobs = torch.log_softmax(torch.randn(bsz, beam, 16, generator=g) * sharp, dim=-1)
        scores = torch.randn(bsz, beam, 6, generator=g)
        calls.append((step, lprobs, scores))
    return calls


KIND = "data-dependent-slice"
