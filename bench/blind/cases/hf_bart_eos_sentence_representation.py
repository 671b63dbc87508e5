"""HF transformers BART sequence classification: the sentence representation is the hidden state of
the last <eos> token, gathered with a boolean mask after checking that every example has the same
number of <eos> tokens.

Source: https://github.com/huggingface/transformers/blob/main/src/transformers/models/bart/modeling_bart.py
(`BartForSequenceClassification.forward`, `BartClassificationHead`); the same block is copied into
mbart, plbart, led, and many downstream poolers.

Breaks: `torch.unique_consecutive(...)` has a data-dependent output size and `len(...) > 1` branches on it
(raise ValueError); `hidden_states[eos_mask, :]` is a boolean-mask gather (data-dependent size).

HAND: the count check moves into a `torch.library.custom_op` with an ORDERED effect that raises the
same ValueError at run time; the representation is gathered at the index of the last <eos> of each row
(`torch.where(eos_mask, arange, -1).amax(1)`), equal to the masked view's `[:, -1, :]` when every row has
the same (non-zero) number of <eos> tokens, which BART's tokenizer guarantees (every sequence ends with
</s>) and the check enforces.
"""

import torch
from torch import nn


class BartConfig:
    def __init__(self):
        self.vocab_size = 16
        self.d_model = 8
        self.eos_token_id = 2
        self.pad_token_id = 1
        self.num_labels = 3
        self.classifier_dropout = 0.0


class BartClassificationHead(nn.Module):
    """Head for sentence-level classification tasks."""

    def __init__(self, input_dim, inner_dim, num_classes, pooler_dropout):
        super().__init__()
        self.dense = nn.Linear(input_dim, inner_dim)
        self.dropout = nn.Dropout(p=pooler_dropout)
        self.out_proj = nn.Linear(inner_dim, num_classes)

    def forward(self, hidden_states):
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.dense(hidden_states)
        hidden_states = torch.tanh(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.out_proj(hidden_states)
        return hidden_states


class TinyBartModel(nn.Module):
    """Stand-in for BartModel: embeddings, one self-attention layer, layer norm."""

    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.d_model, config.pad_token_id)
        self.attn = nn.MultiheadAttention(config.d_model, 2, batch_first=True)
        self.layernorm = nn.LayerNorm(config.d_model)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        a, _ = self.attn(x, x, x, need_weights=False)
        return (self.layernorm(x + a),)


class BartForSequenceClassification(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = TinyBartModel(config)
        self.classification_head = BartClassificationHead(
            config.d_model,
            config.d_model,
            config.num_labels,
            config.classifier_dropout,
        )

    def forward(self, input_ids, labels=None):
        outputs = self.model(input_ids)
        hidden_states = outputs[0]  # last hidden state

        eos_mask = input_ids.eq(self.config.eos_token_id).to(hidden_states.device)

        if len(torch.unique_consecutive(eos_mask.sum(1))) > 1:
            raise ValueError("All examples must have the same number of <eos> tokens.")
        sentence_representation = hidden_states[eos_mask, :].view(hidden_states.size(0), -1, hidden_states.size(-1))[
            :, -1, :
        ]
        logits = self.classification_head(sentence_representation)

        loss = None
        if labels is not None:
            loss_fct = nn.CrossEntropyLoss()
            loss = loss_fct(logits.view(-1, self.config.num_labels), labels.view(-1))
        return loss, logits


def make():
    torch.manual_seed(0)
    return BartForSequenceClassification(BartConfig()).eval()


def _ids(rows):
    return torch.tensor(rows, dtype=torch.long)


def inputs():
    # 0 = <s>, 1 = <pad>, 2 = </s>
    return [
        (_ids([[0, 5, 6, 7, 2, 1], [0, 8, 9, 2, 1, 1]]),),
        (_ids([[0, 5, 6, 7, 2, 1], [0, 8, 9, 2, 1, 1]]), _ids([0, 2])),
        (_ids([[0, 5, 2, 2, 7, 2], [0, 2, 2, 9, 4, 2]]), _ids([1, 1])),  # three </s> each (sentence pairs)
        (_ids([[0, 3, 4, 5, 6, 2]]),),
        (_ids([[0, 3, 2], [0, 4, 2], [0, 5, 2]]), _ids([2, 0, 1])),
        (_ids([[0, 11, 12, 13, 14, 15, 2, 1], [0, 3, 2, 1, 1, 1, 1, 1]]),),
        (_ids([[0, 7, 2, 2, 9, 2, 1], [0, 2, 2, 4, 5, 6, 2]]), _ids([2, 2])),
        (_ids([[0, 9, 9, 9, 2], [0, 8, 8, 8, 2]]), _ids([0, 1])),
    ]


def failing_inputs():
    return [
        (_ids([[0, 5, 2, 2, 7, 2], [0, 8, 9, 2, 1, 1]]),),  # 3 vs 1 </s>
        (_ids([[0, 5, 2], [0, 2, 2], [0, 6, 2]]), _ids([0, 1, 2])),
    ]


KIND = "unique+bool-mask"
GRAD = True
