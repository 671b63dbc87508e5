"""fairseq `label_smoothed_cross_entropy` criterion with `--report-accuracy`: label-smoothed NLL over
the non-pad target tokens plus the number of correctly predicted tokens, both put into the logging
output with `utils.item`.

Source: https://github.com/facebookresearch/fairseq/blob/main/fairseq/criterions/label_smoothed_cross_entropy.py
(`label_smoothed_nll_loss`, `LabelSmoothedCrossEntropyCriterion.forward`, `get_lprobs_and_target`,
`compute_loss`, `compute_accuracy`) and https://github.com/facebookresearch/fairseq/blob/main/fairseq/utils.py
(`item`); the translation model is reduced to embeddings + a linear decoder with
`get_normalized_probs` / `get_targets`.

Breaks: `lprobs.argmax(1).masked_select(mask).eq(target.masked_select(mask))` (masked_select: data-dependent
size); `utils.item(...)` calls `tensor.item()` for the logging output.

HAND: count the correct tokens as `(lprobs.argmax(1).eq(target) & mask).sum()` (same int64 count); the
logging output keeps Python numbers, so `utils.item`'s `.item()` stays (partial).
"""

import torch
import torch.nn.functional as F
from torch import nn


class utils:
    @staticmethod
    def item(tensor):
        # tpu-comment: making this a no-op for xla devices.
        if torch.is_tensor(tensor) and tensor.device.type == "xla":
            return tensor.detach()
        if hasattr(tensor, "item"):
            return tensor.item()
        if hasattr(tensor, "__getitem__"):
            return tensor[0]
        return tensor


def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=None, reduce=True):
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    if ignore_index is not None:
        pad_mask = target.eq(ignore_index)
        nll_loss.masked_fill_(pad_mask, 0.0)
        smooth_loss.masked_fill_(pad_mask, 0.0)
    else:
        nll_loss = nll_loss.squeeze(-1)
        smooth_loss = smooth_loss.squeeze(-1)
    if reduce:
        nll_loss = nll_loss.sum()
        smooth_loss = smooth_loss.sum()
    eps_i = epsilon / (lprobs.size(-1) - 1)
    loss = (1.0 - epsilon - eps_i) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss


class TinyTranslationModel(nn.Module):
    def __init__(self, vocab=11, dim=6):
        super().__init__()
        self.encoder_embed = nn.Embedding(vocab, dim, padding_idx=1)
        self.decoder_embed = nn.Embedding(vocab, dim, padding_idx=1)
        self.output_projection = nn.Linear(dim, vocab)

    def forward(self, src_tokens, src_lengths, prev_output_tokens):
        enc = self.encoder_embed(src_tokens).mean(dim=1, keepdim=True)
        x = torch.tanh(self.decoder_embed(prev_output_tokens) + enc)
        return self.output_projection(x), {"attn": [None]}

    def get_normalized_probs(self, net_output, log_probs, sample=None):
        logits = net_output[0]
        if log_probs:
            return F.log_softmax(logits, dim=-1)
        return F.softmax(logits, dim=-1)

    def get_targets(self, sample, net_output):
        return sample["target"]


class LabelSmoothedCrossEntropyCriterion(nn.Module):
    def __init__(self, padding_idx, sentence_avg, label_smoothing, ignore_prefix_size=0, report_accuracy=False):
        super().__init__()
        self.padding_idx = padding_idx
        self.sentence_avg = sentence_avg
        self.eps = label_smoothing
        self.ignore_prefix_size = ignore_prefix_size
        self.report_accuracy = report_accuracy

    def forward(self, model, sample, reduce=True):
        """Compute the loss for the given sample.

        Returns a tuple with three elements:
        1) the loss
        2) the sample size, which is used as the denominator for the gradient
        3) logging outputs to display while training
        """
        net_output = model(**sample["net_input"])
        loss, nll_loss = self.compute_loss(model, net_output, sample, reduce=reduce)
        sample_size = (
            sample["target"].size(0) if self.sentence_avg else sample["ntokens"]
        )
        logging_output = {
            "loss": loss.data,
            "nll_loss": nll_loss.data,
            "ntokens": sample["ntokens"],
            "nsentences": sample["target"].size(0),
            "sample_size": sample_size,
        }
        if self.report_accuracy:
            n_correct, total = self.compute_accuracy(model, net_output, sample)
            logging_output["n_correct"] = utils.item(n_correct.data)
            logging_output["total"] = utils.item(total.data)
        return loss, sample_size, logging_output

    def get_lprobs_and_target(self, model, net_output, sample):
        lprobs = model.get_normalized_probs(net_output, log_probs=True)
        target = model.get_targets(sample, net_output)
        if self.ignore_prefix_size > 0:
            # lprobs: B x T x C
            lprobs = lprobs[:, self.ignore_prefix_size :, :].contiguous()
            target = target[:, self.ignore_prefix_size :].contiguous()
        return lprobs.view(-1, lprobs.size(-1)), target.view(-1)

    def compute_loss(self, model, net_output, sample, reduce=True):
        lprobs, target = self.get_lprobs_and_target(model, net_output, sample)
        loss, nll_loss = label_smoothed_nll_loss(
            lprobs,
            target,
            self.eps,
            ignore_index=self.padding_idx,
            reduce=reduce,
        )
        return loss, nll_loss

    def compute_accuracy(self, model, net_output, sample):
        lprobs, target = self.get_lprobs_and_target(model, net_output, sample)
        mask = target.ne(self.padding_idx)
        n_correct = torch.sum(
            lprobs.argmax(1).masked_select(mask).eq(target.masked_select(mask))
        )
        total = torch.sum(mask)
        return n_correct, total


class TrainStepLoss(nn.Module):
    """`task.train_step`'s `criterion(model, sample)` call."""

    def __init__(self, ignore_prefix_size=0):
        super().__init__()
        self.model = TinyTranslationModel()
        self.criterion = LabelSmoothedCrossEntropyCriterion(
            padding_idx=1, sentence_avg=False, label_smoothing=0.1,
            ignore_prefix_size=ignore_prefix_size, report_accuracy=True,
        )

    def forward(self, sample):
        return self.criterion(self.model, sample)


def make():
    torch.manual_seed(0)
    return TrainStepLoss(ignore_prefix_size=1)


def inputs():
    g = torch.Generator().manual_seed(0)
    cases = []
    for b, s, t, pad in [(2, 4, 5, 1), (1, 3, 4, 0), (3, 5, 6, 2), (2, 2, 3, 0), (4, 3, 5, 3), (1, 6, 7, 4),
                         (2, 5, 2, 1), (3, 4, 4, 0)]:
        src = torch.randint(4, 11, (b, s), generator=g)
        target = torch.randint(4, 11, (b, t), generator=g)
        target[:, -1] = 2  # eos
        if pad:
            target[0, t - min(pad, t - 1):] = 1  # right padding of the first sentence
        prev = torch.cat([torch.full((b, 1), 2), target[:, :-1]], dim=1)
        sample = {
            "net_input": {"src_tokens": src, "src_lengths": torch.full((b,), s), "prev_output_tokens": prev},
            "target": target,
            "ntokens": int(target.ne(1).sum()),
        }
        cases.append((sample,))
    return cases


KIND = "masked-select+item"
GRAD = True
