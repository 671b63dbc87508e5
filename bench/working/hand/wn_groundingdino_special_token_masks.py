"""Hand rewrite of cases/wn_groundingdino_special_token_masks.py: the loop over the `nonzero`
special tokens becomes cumulative min/max index computations over all tokens (same masks and
position ids, including `previous_col` carried over between rows)."""
import torch

KIND = "nonzero-loop-branch"


def generate_masks_with_special_tokens(tokenized, special_tokens_list, tokenizer):
    """Generate attention mask between each pair of special tokens
    Args:
        input_ids (torch.Tensor): input ids. Shape: [bs, num_token]
        special_tokens_mask (list): special tokens mask.
    Returns:
        torch.Tensor: attention mask between each special tokens.
    """
    input_ids = tokenized["input_ids"]
    bs, num_token = input_ids.shape
    # special_tokens_mask: bs, num_token. 1 for special tokens. 0 for normal tokens
    special_tokens_mask = torch.zeros((bs, num_token), device=input_ids.device).bool()
    for special_token in special_tokens_list:
        special_tokens_mask |= input_ids == special_token

    # (vectorised form of the loop over `torch.nonzero(special_tokens_mask)`, which visits the special
    # tokens in row-major order with `previous_col` carried over from row to row)
    device = input_ids.device
    cols = torch.arange(num_token, device=device)
    # column of the first special token at or after each token in its row (num_token if none)
    special_col = torch.where(special_tokens_mask, cols, num_token)
    closing_col = special_col.flip(-1).cummin(dim=-1).values.flip(-1)
    has_closing = closing_col < num_token
    # flat index of the special token visited before each position (exclusive), -1 if none
    flat = torch.arange(bs * num_token, device=device)
    flat_special = torch.where(special_tokens_mask.reshape(-1), flat, -1)
    prev_flat = torch.cat([flat_special.new_full((1,), -1), flat_special[:-1]]).cummax(dim=0).values
    prev_col_flat = torch.where(prev_flat >= 0, prev_flat % num_token, 0)
    # `previous_col` when the closing special token of each position is visited
    closing_flat = (torch.arange(bs, device=device)[:, None] * num_token + closing_col.clamp(max=num_token - 1))
    previous_col = prev_col_flat[closing_flat]
    in_block = (
        has_closing
        & (closing_col != 0)
        & (closing_col != num_token - 1)
        & (cols[None, :] > previous_col)
    )
    position_ids = torch.where(in_block, cols[None, :] - previous_col - 1, 0).to(torch.float)
    same_block = in_block[:, :, None] & in_block[:, None, :] & (closing_col[:, :, None] == closing_col[:, None, :])
    eye = torch.eye(num_token, device=device).bool().unsqueeze(0)
    attention_mask = eye | same_block

    # # padding mask
    # padding_mask = tokenized['attention_mask']
    # attention_mask = attention_mask & padding_mask.unsqueeze(1).bool() & padding_mask.unsqueeze(2).bool()

    return attention_mask, position_ids.to(torch.long)


SPECIAL = [101, 102, 1012, 1029]


def make():
    return generate_masks_with_special_tokens


def _tok(*rows):
    return {"input_ids": torch.tensor(rows, dtype=torch.long)}


def inputs():
    # 2000-2999: word pieces
    return [
        # "cat . dog ." + [SEP]
        (_tok([101, 2001, 1012, 2002, 1012, 102, 0]), SPECIAL, None),
        # two captions, padding after [SEP]
        (_tok([101, 2001, 2003, 1012, 2002, 1012, 102, 0, 0],
              [101, 2004, 1012, 102, 0, 0, 0, 0, 0]), SPECIAL, None),
        # [SEP] in the last column, "?" separator
        (_tok([101, 2001, 1029, 2002, 2005, 2006, 1012, 102]), SPECIAL, None),
        # no phrase separators
        (_tok([101, 2001, 2002, 2003, 102, 0, 0]), SPECIAL, None),
        # three rows of different lengths
        (_tok([101, 2001, 1012, 2002, 2003, 1012, 2004, 1012, 102, 0],
              [101, 2007, 2008, 1012, 102, 0, 0, 0, 0, 0],
              [101, 2009, 1012, 2010, 1012, 2011, 1012, 2012, 1012, 102]), SPECIAL, None),
        # separators only in the list passed (no "?" id): "?" is an ordinary token
        (_tok([101, 2001, 1029, 2002, 1012, 102, 0, 0]), [101, 102, 1012], None),
        # a row with no special token at all, after a row that ends with padding (carry-over)
        (_tok([101, 2001, 1012, 102, 0, 0, 0],
              [2001, 2002, 2003, 2004, 2005, 2006, 2007]), SPECIAL, None),
        # a row starting with a phrase (no [CLS]): previous_col carries from the row before
        (_tok([101, 2001, 1012, 2002, 102, 0, 0, 0],
              [2003, 2004, 2005, 2006, 2007, 1012, 102, 0],
              [101, 2008, 1012, 2009, 1012, 102, 0, 0]), SPECIAL, None),
        # consecutive separators
        (_tok([101, 1012, 1012, 2001, 1012, 102, 0, 0, 0, 0, 0, 0]), SPECIAL, None),
    ]
