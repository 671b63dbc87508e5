"""Megatron-LM's GPT batch preparation: build the causal attention mask, loss mask and position ids for
packed documents, optionally resetting the attention and the positions at every EOD token.

Source: https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/utils.py
(`get_ltor_masks_and_position_ids`; the same function is in megatron/utils.py of older releases and
is copied by many Megatron forks).

Breaks: `position_ids[b, data[b] == eod_token]` (boolean-mask indexing, a data-dependent number of
EOD positions), then `for j in range(eod_index.size()[0])` with `i = eod_index[j]` used as slice
bounds -- a Python loop over the EODs whose count and slices depend on the data.

HAND: vectorised over the batch: a key k is hidden from a query q > k iff some EOD i has
k <= i < q, i.e. iff the number of EODs before q and before k differ (`cumsum` of the EOD flags),
and the reset position of token t is t minus one past the last EOD before t (`cummax` of
`(i + 1) * is_eod`, shifted by one). Same masks and ids (bool, float, long).
"""
import torch


def get_ltor_masks_and_position_ids(data, eod_token, reset_position_ids, reset_attention_mask, eod_mask_loss):
    """Build masks and position id for left to right model."""

    # Extract batch size and sequence length.
    micro_batch_size, seq_length = data.size()

    # Attention mask (lower triangular).
    if reset_attention_mask:
        att_mask_batch = micro_batch_size
    else:
        att_mask_batch = 1
    attention_mask = torch.tril(
        torch.ones((att_mask_batch, seq_length, seq_length), device=data.device)
    ).view(att_mask_batch, 1, seq_length, seq_length)

    # Loss mask.
    loss_mask = torch.ones(data.size(), dtype=torch.float, device=data.device)
    if eod_mask_loss:
        loss_mask[data == eod_token] = 0.0

    # Position ids.
    position_ids = torch.arange(seq_length, dtype=torch.long, device=data.device)
    position_ids = position_ids.unsqueeze(0).expand_as(data)
    # We need to clone as the ids will be modifed based on batch index.
    if reset_position_ids:
        position_ids = position_ids.clone()

    if reset_position_ids or reset_attention_mask:
        is_eod = data == eod_token
        # number of EODs strictly before each position
        eods_before = torch.cumsum(is_eod.long(), dim=1) - is_eod.long()
        # Mask attention across documents: q sees k iff no EOD lies in [k, q).
        if reset_attention_mask:
            same_doc = eods_before.unsqueeze(2) == eods_before.unsqueeze(1)
            attention_mask = attention_mask * same_doc.unsqueeze(1).to(attention_mask.dtype)
        # Reset positions: t - (one past the last EOD before t).
        if reset_position_ids:
            ends = torch.where(is_eod, position_ids + 1, torch.zeros_like(position_ids))
            last_end = torch.cummax(ends, dim=1).values
            doc_start = torch.cat([torch.zeros_like(last_end[:, :1]), last_end[:, :-1]], dim=1)
            position_ids = position_ids - doc_start

    # Convert attention mask to binary:
    attention_mask = attention_mask < 0.5

    return attention_mask, loss_mask, position_ids


def make():
    return get_ltor_masks_and_position_ids


EOD = 0


def inputs():
    g = torch.Generator().manual_seed(5)
    calls = []
    flags = [
        (True, True, True),
        (True, False, False),
        (False, True, False),
        (False, False, True),
        (True, True, False),
        (True, True, True),
        (False, True, True),
        (True, False, True),
        (True, True, True),
    ]
    for n, (rp, ra, em) in enumerate(flags):
        data = torch.randint(1, 20, (2, 10), generator=g)
        if n == 0:
            data[0, 3] = EOD
            data[0, 6] = EOD
            data[1, 9] = EOD          # EOD at the last position
        elif n == 5:
            pass                      # no EOD at all
        elif n == 8:
            data[0, 0] = EOD          # EOD first, and two in a row
            data[0, 4] = EOD
            data[0, 5] = EOD
            data[1, 2] = EOD
        else:
            data[torch.rand(2, 10, generator=g) < 0.25] = EOD
        calls.append((data, EOD, rp, ra, em))
    return calls


KIND = "dynamic-shape-loop"
