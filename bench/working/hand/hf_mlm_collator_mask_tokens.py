"""Hugging Face's masked-language-modeling collator: choose 15% of the non-special tokens, set the
other labels to -100, replace 80% of the chosen inputs by [MASK] and 10% by random words. Without a
precomputed special-tokens mask, it asks the tokenizer for one, row by row, on Python lists.

Source: https://github.com/huggingface/transformers/blob/main/src/transformers/data/data_collator.py
(`DataCollatorForLanguageModeling.torch_mask_tokens`), with the tokenizer's
`get_special_tokens_mask(..., already_has_special_tokens=True)` from
https://github.com/huggingface/transformers/blob/main/src/transformers/tokenization_utils_base.py
(a token is special iff it is in `all_special_ids`); the tokenizer is a stub with a 30-word vocab.

Breaks: `labels.tolist()` (then the tokenizer's Python loop), and `random_words[indices_random]`
(a boolean-mask gather: dynamic shape).

HAND: the special-tokens mask is `torch.isin(labels, torch.tensor(all_special_ids))` (the same
membership test the tokenizer does on lists), and the random replacement is
`inputs.copy_(torch.where(indices_random, random_words, inputs))` (same in-place update of the
caller's tensor, same random draws in the same order).
"""
from typing import Any, Optional, Tuple

import torch


class StubBertTokenizer:
    """The parts of a BERT tokenizer the collator uses."""

    pad_token_id, unk_token_id, cls_token_id, sep_token_id, mask_token_id = 0, 1, 2, 3, 4
    mask_token = "[MASK]"
    _vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}

    def __len__(self):
        return 30

    @property
    def all_special_ids(self):
        return [self.pad_token_id, self.unk_token_id, self.cls_token_id, self.sep_token_id, self.mask_token_id]

    def convert_tokens_to_ids(self, token):
        return self._vocab.get(token, self.unk_token_id)

    def get_special_tokens_mask(self, token_ids_0, token_ids_1=None, already_has_special_tokens=False):
        if already_has_special_tokens:
            if token_ids_1 is not None:
                raise ValueError(
                    "You should not supply a second sequence if the provided sequence of "
                    "ids is already formatted with special tokens for the model."
                )

            all_special_ids = self.all_special_ids  # cache the property

            special_tokens_mask = [1 if token in all_special_ids else 0 for token in token_ids_0]

            return special_tokens_mask
        return [1] + ([0] * len(token_ids_0)) + [1]


class DataCollatorForLanguageModeling:
    def __init__(self, tokenizer, mlm=True, mlm_probability=0.15):
        self.tokenizer = tokenizer
        self.mlm = mlm
        self.mlm_probability = mlm_probability

    def torch_mask_tokens(self, inputs: Any, special_tokens_mask: Optional[Any] = None) -> Tuple[Any, Any]:
        """
        Prepare masked tokens inputs/labels for masked language modeling: 80% MASK, 10% random, 10% original.
        """
        labels = inputs.clone()
        # We sample a few tokens in each sequence for MLM training (with probability `self.mlm_probability`)
        probability_matrix = torch.full(labels.shape, self.mlm_probability)
        if special_tokens_mask is None:
            # a token is special iff it is one of the tokenizer's special ids
            special_tokens_mask = torch.isin(labels, torch.tensor(self.tokenizer.all_special_ids))
        else:
            special_tokens_mask = special_tokens_mask.bool()

        probability_matrix.masked_fill_(special_tokens_mask, value=0.0)
        masked_indices = torch.bernoulli(probability_matrix).bool()
        labels[~masked_indices] = -100  # We only compute loss on masked tokens

        # 80% of the time, we replace masked input tokens with tokenizer.mask_token ([MASK])
        indices_replaced = torch.bernoulli(torch.full(labels.shape, 0.8)).bool() & masked_indices
        inputs[indices_replaced] = self.tokenizer.convert_tokens_to_ids(self.tokenizer.mask_token)

        # 10% of the time, we replace masked input tokens with random word
        indices_random = torch.bernoulli(torch.full(labels.shape, 0.5)).bool() & masked_indices & ~indices_replaced
        random_words = torch.randint(len(self.tokenizer), labels.shape, dtype=torch.long)
        inputs.copy_(torch.where(indices_random, random_words, inputs))

        # The rest of the time (10% of the time) we keep the masked input tokens unchanged
        return inputs, labels


def make():
    return DataCollatorForLanguageModeling(StubBertTokenizer(), mlm_probability=0.3).torch_mask_tokens


def inputs():
    g = torch.Generator().manual_seed(6)
    calls = []
    for n in range(9):
        ids = torch.randint(5, 30, (3, 10), generator=g)
        ids[:, 0] = 2                       # [CLS]
        ids[:, -1] = 3                      # [SEP]
        ids[1, 6:] = 0                      # padding
        ids[2, 4] = 1                       # an [UNK]
        if n in (2, 5):
            # the dataset preprocessed the special-tokens mask
            calls.append((ids, (ids < 5).long()))
        else:
            calls.append((ids, None))
    return calls


KIND = "tolist+dynamic-shape"
