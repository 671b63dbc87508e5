"""OpenFold's AlphaFoldLoss: sums the weighted loss terms, skipping (with a logged warning) any term
that came out NaN or inf, then scales by sqrt(min(mean sequence length, crop size)).

Source: https://github.com/aqlaboratory/openfold/blob/main/openfold/utils/loss.py
(AlphaFoldLoss.loss / forward kept as written; two of its terms, masked_msa_loss and
experimentally_resolved_loss with softmax_cross_entropy / sigmoid_cross_entropy, are kept as written;
the ml_collections config is a small dict with attribute access.)

Breaks: `if torch.isnan(loss) or torch.isinf(loss):` branches on a 0-d tensor inside the loop over
loss terms (the only site dynamo reports: after it the rest of the frame, including
`min(seq_len, crop_len)`, a comparison of a 0-d tensor with an int, runs without being traced); the
branch body calls `logging.warning` and replaces the term by a fresh leaf
`loss.new_tensor(0.0, requires_grad=True)`.

HAND: none — a skipped term is replaced by a new leaf, so no gradient at all reaches the inputs of
that term (their .grad stays None, the parameters behind them get no update), which no traced
select reproduces (`torch.where` gives them zero or NaN gradients); the skip must stay a Python
branch. (Rewriting `min(seq_len, crop_len)` as a clamp alone removes no reported site.)
"""
import logging

import torch
import torch.nn as nn


class _Config(dict):
    """Stands in for ml_collections.ConfigDict: item and attribute access."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)


def softmax_cross_entropy(logits, labels):
    loss = -1 * torch.sum(
        labels * torch.nn.functional.log_softmax(logits, dim=-1),
        dim=-1,
    )
    return loss


def sigmoid_cross_entropy(logits, labels):
    logits_dtype = logits.dtype
    logits = logits.double()
    labels = labels.double()
    log_p = torch.nn.functional.logsigmoid(logits)
    # log_p = torch.log(torch.sigmoid(logits))
    log_not_p = torch.nn.functional.logsigmoid(-1 * logits)
    # log_not_p = torch.log(torch.sigmoid(-logits))
    loss = (-1. * labels) * log_p - (1. - labels) * log_not_p
    loss = loss.to(dtype=logits_dtype)
    return loss


def masked_msa_loss(logits, true_msa, bert_mask, num_classes, eps=1e-8, **kwargs):
    errors = softmax_cross_entropy(
        logits, torch.nn.functional.one_hot(true_msa, num_classes=num_classes)
    )

    # FP16-friendly averaging. Equivalent to:
    # loss = (
    #     torch.sum(errors * bert_mask, dim=(-1, -2)) /
    #     (eps + torch.sum(bert_mask, dim=(-1, -2)))
    # )
    loss = errors * bert_mask
    loss = torch.sum(loss, dim=-1)
    scale = 0.5
    denom = eps + torch.sum(scale * bert_mask, dim=(-1, -2))
    loss = loss / denom[..., None]
    loss = torch.sum(loss, dim=-1)
    loss = loss * scale

    loss = torch.mean(loss)

    return loss


def experimentally_resolved_loss(
    logits: torch.Tensor,
    atom37_atom_exists: torch.Tensor,
    all_atom_mask: torch.Tensor,
    resolution: torch.Tensor,
    min_resolution: float,
    max_resolution: float,
    eps: float = 1e-8,
    **kwargs,
) -> torch.Tensor:
    errors = sigmoid_cross_entropy(logits, all_atom_mask)
    loss = torch.sum(errors * atom37_atom_exists, dim=-1)
    loss = loss / (eps + torch.sum(atom37_atom_exists, dim=(-1, -2))).unsqueeze(-1)
    loss = torch.sum(loss, dim=-1)

    loss = loss * (
        (resolution >= min_resolution) & (resolution <= max_resolution)
    )

    loss = torch.mean(loss)

    return loss


class AlphaFoldLoss(nn.Module):
    """Aggregation of the various losses described in the supplement"""

    def __init__(self, config):
        super(AlphaFoldLoss, self).__init__()
        self.config = config

    def loss(self, out, batch, _return_breakdown=False):
        """
        Rename previous forward() as loss()
        so that can be reused in the subclass
        """
        loss_fns = {
            "experimentally_resolved": lambda: experimentally_resolved_loss(
                logits=out["experimentally_resolved_logits"],
                **{**batch, **self.config.experimentally_resolved},
            ),
            "masked_msa": lambda: masked_msa_loss(
                logits=out["masked_msa_logits"],
                **{**batch, **self.config.masked_msa},
            ),
        }

        cum_loss = 0.0
        losses = {}
        for loss_name, loss_fn in loss_fns.items():
            weight = self.config[loss_name].weight
            loss = loss_fn()
            if torch.isnan(loss) or torch.isinf(loss):
                # for k,v in batch.items():
                #    if torch.any(torch.isnan(v)) or torch.any(torch.isinf(v)):
                #        logging.warning(f"{k}: is nan")
                # logging.warning(f"{loss_name}: {loss}")
                logging.warning(f"{loss_name} loss is NaN. Skipping...")
                loss = loss.new_tensor(0.0, requires_grad=True)
            cum_loss = cum_loss + weight * loss
            losses[loss_name] = loss.detach().clone()
        losses["unscaled_loss"] = cum_loss.detach().clone()

        # Scale the loss by the square root of the minimum of the crop size and
        # the (average) sequence length. See subsection 1.9.
        seq_len = torch.mean(batch["seq_length"].float())
        crop_len = batch["aatype"].shape[-1]
        cum_loss = cum_loss * torch.sqrt(min(seq_len, crop_len))

        losses["loss"] = cum_loss.detach().clone()

        if not _return_breakdown:
            return cum_loss

        return cum_loss, losses

    def forward(self, out, batch, _return_breakdown=False):
        if not _return_breakdown:
            cum_loss = self.loss(out, batch, _return_breakdown)
            return cum_loss

        cum_loss, losses = self.loss(out, batch, _return_breakdown)
        return cum_loss, losses


KIND = "nan-skip-log"
GRAD = True


def _config():
    return _Config(
        experimentally_resolved=_Config(weight=0.01, min_resolution=0.1, max_resolution=3.0, eps=1e-8),
        masked_msa=_Config(weight=2.0, num_classes=23, eps=1e-8),
    )


def make():
    torch.manual_seed(0)
    return AlphaFoldLoss(_config())


def inputs():
    g = torch.Generator().manual_seed(0)
    out_list = []
    n_seq, n_res, n_atom, n_cls = 3, 6, 5, 23
    for k in range(10):
        out = {
            "experimentally_resolved_logits": torch.randn(n_res, n_atom, generator=g),
            "masked_msa_logits": torch.randn(n_seq, n_res, n_cls, generator=g),
        }
        batch = {
            "aatype": torch.randint(0, 20, (n_res,), generator=g),
            "seq_length": torch.tensor([n_res - k % 3] * n_res),
            "true_msa": torch.randint(0, n_cls, (n_seq, n_res), generator=g),
            "bert_mask": (torch.rand(n_seq, n_res, generator=g) < 0.4).float(),
            "atom37_atom_exists": (torch.rand(n_res, n_atom, generator=g) < 0.8).float(),
            "all_atom_mask": (torch.rand(n_res, n_atom, generator=g) < 0.6).float(),
            "resolution": torch.tensor([1.0 + 0.5 * k]),
        }
        if k in (2, 7):  # an fp16-style overflow: NaN logits in the MSA head
            out["masked_msa_logits"][0, 1, 3] = float("nan")
        if k in (3, 7):  # a -inf logit on a resolved atom: infinite experimentally-resolved loss
            batch["all_atom_mask"][2, 1] = 1.0
            batch["atom37_atom_exists"][2, 1] = 1.0
            out["experimentally_resolved_logits"][2, 1] = float("-inf")
        out_list.append((out, batch, k % 2 == 1))
    return out_list
