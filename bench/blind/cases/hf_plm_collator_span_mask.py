"""HF transformers `DataCollatorForPermutationLanguageModeling` (XLNet pre-training): masks random spans
(span length drawn per span, one span per `span_length / plm_probability` context), builds the
permutation mask and target mapping.

Source: https://github.com/huggingface/transformers/blob/main/src/transformers/data/data_collator.py
(`DataCollatorForPermutationLanguageModeling.torch_mask_tokens`; the tokenizer is reduced to a stub with
`PreTrainedTokenizerBase.get_special_tokens_mask(..., already_has_special_tokens=True)`'s behaviour).

Breaks: `torch.randint(...).item()` twice per span inside the per-row `while cur_len < max_len` loop (the
loop's trip count depends on the drawn lengths). The break is inside a loop, so dynamo skips the whole
frame and runs it eagerly: the later `labels.tolist()` for the tokenizer's special-token mask is not
reported.

HAND: none — the number of random draws and their order depend on the drawn values (a host-side loop
over a random stream), so no static rewrite draws the same spans from the same generator state.
"""

import torch


class TinyTokenizer:
    """The parts of a PreTrainedTokenizer the collator uses (XLNet-like special ids)."""

    cls_token_id = 0
    sep_token_id = 1
    pad_token_id = 2
    mask_token_id = 3
    mask_token = "<mask>"
    _pad_token = "<pad>"

    @property
    def all_special_ids(self):
        return [self.cls_token_id, self.sep_token_id, self.pad_token_id, self.mask_token_id]

    def get_special_tokens_mask(self, token_ids_0, token_ids_1=None, already_has_special_tokens=False):
        assert already_has_special_tokens and token_ids_1 is None
        all_special_ids = self.all_special_ids  # cache the property
        special_tokens_mask = [1 if token in all_special_ids else 0 for token in token_ids_0]
        return special_tokens_mask


class DataCollatorForPermutationLanguageModeling:
    """
    Data collator used for permutation language modeling.
    """

    def __init__(self, tokenizer, plm_probability: float = 1 / 6, max_span_length: int = 5):
        self.tokenizer = tokenizer
        self.plm_probability = plm_probability
        self.max_span_length = max_span_length

    def torch_mask_tokens(self, inputs):
        """
        The masked tokens to be predicted for a particular sequence are determined by the following algorithm:

            0. Start from the beginning of the sequence by setting `cur_len = 0` (number of tokens processed so far).
            1. Sample a `span_length` from the interval `[1, max_span_length]` (length of span of tokens to be masked)
            2. Reserve a context of length `context_length = span_length / plm_probability` to surround span to be
               masked
            3. Sample a starting point `start_index` from the interval `[cur_len, cur_len + context_length -
               span_length]` and mask tokens `start_index:start_index + span_length`
            4. Set `cur_len = cur_len + context_length`. If `cur_len < max_len` (i.e. there are tokens remaining in the
               sequence to be processed), repeat from Step 1.
        """

        if self.tokenizer.mask_token is None:
            raise ValueError(
                "This tokenizer does not have a mask token which is necessary for permutation language modeling."
                " Please add a mask token if you want to use this tokenizer."
            )

        if inputs.size(1) % 2 != 0:
            raise ValueError(
                "This collator requires that sequence lengths be even to create a leakage-free perm_mask. Please see"
                " relevant comments in source code for details."
            )

        labels = inputs.clone()
        # Creating the mask and target_mapping tensors
        masked_indices = torch.full(labels.shape, 0, dtype=torch.bool)
        target_mapping = torch.zeros((labels.size(0), labels.size(1), labels.size(1)), dtype=torch.float32)

        for i in range(labels.size(0)):
            # Start from the beginning of the sequence by setting `cur_len = 0` (number of tokens processed so far).
            cur_len = 0
            max_len = labels.size(1)

            while cur_len < max_len:
                # Sample a `span_length` from the interval `[1, max_span_length]` (length of span of tokens to be masked)
                span_length = torch.randint(1, self.max_span_length + 1, (1,)).item()
                # Reserve a context of length `context_length = span_length / plm_probability` to surround the span to be masked
                context_length = int(span_length / self.plm_probability)
                # Sample a starting point `start_index` from the interval `[cur_len, cur_len + context_length - span_length]` and mask tokens `start_index:start_index + span_length`
                start_index = cur_len + torch.randint(context_length - span_length + 1, (1,)).item()
                masked_indices[i, start_index : start_index + span_length] = 1
                # Set `cur_len = cur_len + context_length`
                cur_len += context_length

            # Since we're replacing non-masked tokens with -100 in the labels tensor instead of skipping them altogether,
            # the i-th predict corresponds to the i-th token.
            target_mapping[i] = torch.eye(labels.size(1))

        special_tokens_mask = torch.tensor(
            [self.tokenizer.get_special_tokens_mask(val, already_has_special_tokens=True) for val in labels.tolist()],
            dtype=torch.bool,
        )
        masked_indices.masked_fill_(special_tokens_mask, value=0.0)
        if self.tokenizer._pad_token is not None:
            padding_mask = labels.eq(self.tokenizer.pad_token_id)
            masked_indices.masked_fill_(padding_mask, value=0.0)

        # Mask indicating non-functional tokens, where functional tokens are [SEP], [CLS], padding, etc.
        non_func_mask = ~(padding_mask | special_tokens_mask)

        inputs[masked_indices] = self.tokenizer.mask_token_id
        labels[~masked_indices] = -100  # We only compute loss on masked tokens

        perm_mask = torch.zeros((labels.size(0), labels.size(1), labels.size(1)), dtype=torch.float32)

        for i in range(labels.size(0)):
            # Generate permutation indices i.e. sample a random factorisation order for the sequence. This will
            # determine which tokens a given token can attend to (encoded in `perm_mask`).
            # Note: Length of token sequence being permuted has to be less than or equal to reused sequence length
            # (see documentation for `mems`), otherwise information may leak through due to reuse. In this implementation,
            # we assume that reused length is half of sequence length and permutation length is equal to reused length.
            # This requires that the sequence length be even.

            # Create a linear factorisation order
            perm_index = torch.arange(labels.size(1))
            # Split this into two halves, assuming that half the sequence is reused each time
            perm_index = perm_index.reshape((-1, labels.size(1) // 2)).transpose(0, 1)
            # Permute the two halves such that they do not cross over
            perm_index = perm_index[torch.randperm(labels.size(1) // 2)]
            # Flatten this out into the desired permuted factorisation order
            perm_index = torch.flatten(perm_index.transpose(0, 1))
            # Set the permutation indices of non-masked (non-functional) tokens to the
            # smallest index (-1) so that:
            # (1) They can be seen by all other positions
            # (2) They cannot see masked positions, so there won't be information leak
            perm_index.masked_fill_(~masked_indices[i] & non_func_mask[i], -1)
            # The logic for whether the i-th token can attend on the j-th token based on the factorisation order:
            # 0 (can attend): If perm_index[i] > perm_index[j] or j is neither masked nor a functional token
            # 1 (cannot attend): If perm_index[i] <= perm_index[j] and j is either masked or a functional token
            perm_mask[i] = (
                perm_index.reshape((labels.size(1), 1)) <= perm_index.reshape((1, labels.size(1)))
            ) & masked_indices[i]

        return inputs.long(), perm_mask, target_mapping, labels.long()


def make():
    collator = DataCollatorForPermutationLanguageModeling(TinyTokenizer(), plm_probability=1 / 3, max_span_length=3)
    return collator.torch_mask_tokens


def inputs():
    g = torch.Generator().manual_seed(0)
    cases = []
    for b, length, pad in [(2, 8, 0), (1, 6, 2), (3, 10, 3), (2, 4, 0), (1, 12, 5), (4, 6, 1), (2, 14, 4), (3, 8, 2)]:
        ids = torch.randint(4, 30, (b, length), generator=g)
        ids[:, -1] = 1  # <sep>
        ids[:, -2] = 0  # <cls> (XLNet puts it last)
        if pad:
            ids[0, :pad] = 2  # left padding
        cases.append((ids,))
    return cases


def failing_inputs():
    return [(torch.tensor([[5, 6, 7, 1, 0]]),)]


KIND = "item-while-rng"
