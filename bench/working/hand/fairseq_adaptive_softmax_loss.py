"""fairseq's adaptive-softmax language-model criterion: `AdaptiveSoftmax.adapt_target` splits the
targets into the head and the tail clusters with boolean masks, runs each tail projection only on
the rows whose target falls in that cluster, and `AdaptiveLoss` sums the cross-entropies, checks
the cluster targets, and reports the loss and the number of non-pad tokens.

Source: https://github.com/facebookresearch/fairseq/blob/main/fairseq/modules/adaptive_softmax.py
(`AdaptiveSoftmax.adapt_target`, `forward`; quantization-noise / tied-embedding options dropped),
https://github.com/facebookresearch/fairseq/blob/main/fairseq/criterions/adaptive_loss.py
(`AdaptiveLoss.forward`), `fairseq.utils.strip_pad` / `fairseq.utils.item`.

Breaks: `if mask.any():`, `mask.nonzero()` and `target[mask]` in `adapt_target` (dynamic shapes,
data-dependent branch), the check `target[i].min() >= 0 and target[i].max() <= logits[i].size(1)`,
`strip_pad(...).numel()` and `utils.item(loss.data)` (host values for the logging output).

HAND: partial -- every tail projection runs on all rows and its summed cross-entropy is weighted by
the cluster mask (targets outside the cluster are clamped into range first), still only when the
cluster is non-empty (`if mask.any()` stays: an unused tail must get a `None` gradient); the head
target is
`torch.where(mask, cutoff[0] + i - 1, target)`; the target check moves into a
`torch.library.custom_op` with an ORDERED effect that raises the same AssertionError. The token
count and the logged float loss are host values by the criterion's contract and stay.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch._library.effects import EffectType


@torch.library.custom_op("blind_fairseq::check_cluster_targets", mutates_args=())
def _check_cluster_targets(target: torch.Tensor, mask: torch.Tensor, size: int) -> None:
    if bool(mask.any()):
        t = target[mask]
        assert t.min() >= 0 and t.max() <= size


@_check_cluster_targets.register_fake
def _(target, mask, size):
    return None


torch.library._register_effectful_op("blind_fairseq::check_cluster_targets", EffectType.ORDERED)


def strip_pad(tensor, pad):
    return tensor[tensor.ne(pad)]


def item(tensor):
    if hasattr(tensor, "item"):
        return tensor.item()
    if hasattr(tensor, "__getitem__"):
        return tensor[0]
    return tensor


class AdaptiveSoftmax(nn.Module):
    def __init__(self, vocab_size, input_dim, cutoff, dropout):
        super().__init__()

        if vocab_size > cutoff[-1]:
            cutoff = cutoff + [vocab_size]
        else:
            assert vocab_size == cutoff[
                -1], 'cannot specify cutoff smaller than vocab size'

        output_dim = cutoff[0] + len(cutoff) - 1

        self.vocab_size = vocab_size
        self.cutoff = cutoff
        self.dropout = dropout

        self.lsm = nn.LogSoftmax(dim=1)
        self.head = nn.Linear(input_dim, output_dim, bias=False)
        self.tail = nn.ModuleList()

        for i in range(len(cutoff) - 1):
            self.tail.append(
                nn.Sequential(
                    nn.Linear(input_dim, input_dim // 4 ** i, bias=False),
                    nn.Dropout(dropout),
                    nn.Linear(input_dim // 4 ** i, cutoff[i + 1] - cutoff[i], bias=False)
                )
            )

        def init_weights(m):
            if hasattr(m, 'weight'):
                nn.init.xavier_uniform_(m.weight)

        self.apply(init_weights)

    def adapt_target(self, target):
        target = target.view(-1)
        new_target = [target.clone()]
        target_idxs = []

        for i in range(len(self.cutoff) - 1):
            mask = target.ge(self.cutoff[i]).mul(target.lt(self.cutoff[i + 1]))
            new_target[0][mask] = self.cutoff[0] + i - 1

            if mask.any():
                target_idxs.append(mask.nonzero().squeeze(1))
                new_target.append(target[mask].add(-self.cutoff[i]))
            else:
                target_idxs.append(None)
                new_target.append(None)

        return new_target, target_idxs

    def forward_masked(self, input, target):
        """The head logits and head target for all rows, the cluster targets (clamped into range
        outside the cluster) and the cluster masks; each tail is run by the caller, on all rows."""
        input = input.contiguous().view(-1, input.size(-1))
        input = F.dropout(input, p=self.dropout, training=self.training)

        target = target.view(-1)
        head_target = target.clone()
        new_target = [None]
        masks = []
        for i in range(len(self.cutoff) - 1):
            mask = target.ge(self.cutoff[i]).mul(target.lt(self.cutoff[i + 1]))
            head_target = torch.where(mask, self.cutoff[0] + i - 1, head_target)
            size = self.cutoff[i + 1] - self.cutoff[i]
            new_target.append(torch.where(mask, target - self.cutoff[i], 0).clamp(0, size - 1))
            masks.append(mask)
        new_target[0] = head_target
        return self.head(input), input, new_target, masks

    def forward(self, input, target):
        input = input.contiguous().view(-1, input.size(-1))
        input = F.dropout(input, p=self.dropout, training=self.training)

        new_target, target_idxs = self.adapt_target(target)
        output = [self.head(input)]

        for i in range(len(target_idxs)):
            if target_idxs[i] is not None:
                output.append(self.tail[i](input.index_select(0, target_idxs[i])))
            else:
                output.append(None)

        return output, new_target


class TinyDecoder(nn.Module):
    def __init__(self, vocab_size=40, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=1)
        self.layer = nn.Linear(dim, dim)
        self.adaptive_softmax = AdaptiveSoftmax(vocab_size, dim, cutoff=[10, 25], dropout=0.1)

    def forward(self, src_tokens):
        return torch.tanh(self.layer(self.embed(src_tokens))), None


class AdaptiveLoss(nn.Module):
    """The criterion, holding the model (fairseq passes `model` and `sample` to `forward`)."""

    def __init__(self, padding_idx=1, sentence_avg=False):
        super().__init__()
        self.decoder = TinyDecoder()
        self.padding_idx = padding_idx
        self.sentence_avg = sentence_avg

    def forward(self, src_tokens, target, reduce=True):
        adaptive_softmax = self.decoder.adaptive_softmax

        net_output = self.decoder(src_tokens)
        orig_target = target

        nsentences = orig_target.size(0)
        orig_target = orig_target.view(-1)

        bsz = orig_target.size(0)

        head_logits, input2d, target, masks = adaptive_softmax.forward_masked(net_output[0], orig_target)
        assert len(target) == len(masks) + 1

        loss = net_output[0].new(1 if reduce else bsz).zero_()

        # head: every row
        _check_cluster_targets(target[0], torch.ones_like(target[0], dtype=torch.bool), head_logits.size(1))
        loss += F.cross_entropy(head_logits, target[0], ignore_index=self.padding_idx, reduction="sum")
        for i in range(1, len(target)):
            mask = masks[i - 1]
            # an empty cluster's tail is not run (its weights get no gradient, None), as in the
            # original, so this test stays
            if mask.any():
                # the tail on all rows, its cross-entropy weighted by the cluster mask
                tail_logits = adaptive_softmax.tail[i - 1](input2d)
                _check_cluster_targets(orig_target - adaptive_softmax.cutoff[i - 1], mask, tail_logits.size(1))
                per_row = F.cross_entropy(
                    tail_logits, target[i], ignore_index=self.padding_idx, reduction="none"
                )
                loss += (per_row * mask).sum()

        orig = strip_pad(orig_target, self.padding_idx)
        ntokens = orig.numel()
        sample_size = nsentences if self.sentence_avg else ntokens
        logging_output = {
            "loss": item(loss.data) if reduce else loss.data,
            "ntokens": ntokens,
            "nsentences": nsentences,
            "sample_size": sample_size,
        }
        return loss, sample_size, logging_output


def make():
    torch.manual_seed(0)
    return AdaptiveLoss().eval()


def inputs():
    g = torch.Generator().manual_seed(41)
    calls = []
    for n in range(9):
        src = torch.randint(2, 40, (2, 6), generator=g)
        tgt = torch.randint(2, 40, (2, 6), generator=g)
        if n == 1:
            tgt = torch.randint(2, 10, (2, 6), generator=g)       # head words only
        elif n == 2:
            tgt = torch.randint(10, 25, (2, 6), generator=g)      # first tail only (and no head word)
        elif n in (3, 6):
            tgt[1, 4:] = 1                                        # padding
            src[1, 4:] = 1
        elif n == 5:
            tgt = torch.randint(25, 40, (2, 6), generator=g)
            tgt[0, 0] = 11                                        # tail target equal to the pad index
        calls.append((src, tgt))
    return calls


KIND = "dynamic-shape+item"
GRAD = True
