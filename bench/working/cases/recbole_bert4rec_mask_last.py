"""RecBole's BERT4Rec full-ranking prediction: append a [MASK] item after each user's last
interaction (a Python loop over the lengths tensor), encode the sequence bidirectionally, gather
the hidden state at the mask and score every item.

Source: https://github.com/RUCAIBox/RecBole/blob/master/recbole/model/sequential_recommender/bert4rec.py
(`BERT4Rec.reconstruct_test_data`, `forward`, `full_sort_predict`) with `get_attention_mask` and
`gather_indexes` from recbole/model/abstract_recommender.py; RecBole's TransformerEncoder is
reduced to one attention + feed-forward layer.

Breaks: `for batch_id, last_position in enumerate(item_seq_len): item_seq[batch_id][last_position]
= self.mask_token` -- a Python loop over a tensor whose elements index the sequence.

HAND: `item_seq.scatter_(1, item_seq_len.unsqueeze(1), self.mask_token)` -- the same write of the
mask token at each row's length, in one op.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


class TransformerLayer(nn.Module):
    def __init__(self, hidden_size, n_heads, inner_size, layer_norm_eps):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(hidden_size, 3 * hidden_size)
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.ln1 = nn.LayerNorm(hidden_size, eps=layer_norm_eps)
        self.ff1 = nn.Linear(hidden_size, inner_size)
        self.ff2 = nn.Linear(inner_size, hidden_size)
        self.ln2 = nn.LayerNorm(hidden_size, eps=layer_norm_eps)

    def forward(self, hidden_states, attention_mask):
        B, L, H = hidden_states.shape
        q, k, v = self.qkv(hidden_states).view(B, L, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
        scores = scores + attention_mask
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(B, L, H)
        h = self.ln1(self.dense(ctx) + hidden_states)
        return self.ln2(self.ff2(F.gelu(self.ff1(h))) + h)


class BERT4Rec(nn.Module):
    def __init__(self, n_items=20, max_seq_length=6, hidden_size=8, n_heads=2, inner_size=16):
        super().__init__()
        self.n_items = n_items
        self.max_seq_length = max_seq_length
        self.mask_token = self.n_items
        self.item_embedding = nn.Embedding(self.n_items + 1, hidden_size, padding_idx=0)  # mask token add 1
        self.position_embedding = nn.Embedding(self.max_seq_length, hidden_size)
        self.trm_encoder = nn.ModuleList([TransformerLayer(hidden_size, n_heads, inner_size, 1e-12)])
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(0.2)

    def get_attention_mask(self, item_seq, bidirectional=False):
        """Generate left-to-right uni-directional or bidirectional attention mask for multi-head attention."""
        attention_mask = item_seq != 0
        extended_attention_mask = attention_mask.unsqueeze(1).unsqueeze(2)  # torch.bool
        if not bidirectional:
            extended_attention_mask = torch.tril(
                extended_attention_mask.expand((-1, -1, item_seq.size(-1), -1))
            )
        extended_attention_mask = torch.where(extended_attention_mask, 0.0, -10000.0)
        return extended_attention_mask

    def gather_indexes(self, output, gather_index):
        """Gathers the vectors at the specific positions over a minibatch"""
        gather_index = gather_index.view(-1, 1, 1).expand(-1, -1, output.shape[-1])
        output_tensor = output.gather(dim=1, index=gather_index)
        return output_tensor.squeeze(1)

    def reconstruct_test_data(self, item_seq, item_seq_len):
        """
        Add mask token at the last position according to the lengths of item_seq
        """
        padding = torch.zeros(
            item_seq.size(0), dtype=torch.long, device=item_seq.device
        )  # [B]
        item_seq = torch.cat((item_seq, padding.unsqueeze(-1)), dim=-1)  # [B max_len+1]
        for batch_id, last_position in enumerate(item_seq_len):
            item_seq[batch_id][last_position] = self.mask_token
        item_seq = item_seq[:, 1:]
        return item_seq

    def forward(self, item_seq):
        position_ids = torch.arange(
            item_seq.size(1), dtype=torch.long, device=item_seq.device
        )
        position_ids = position_ids.unsqueeze(0).expand_as(item_seq)
        position_embedding = self.position_embedding(position_ids)
        item_emb = self.item_embedding(item_seq)
        input_emb = item_emb + position_embedding
        input_emb = self.LayerNorm(input_emb)
        input_emb = self.dropout(input_emb)
        extended_attention_mask = self.get_attention_mask(item_seq, bidirectional=True)
        output = input_emb
        for layer in self.trm_encoder:
            output = layer(output, extended_attention_mask)
        return output  # [B L H]

    def full_sort_predict(self, item_seq, item_seq_len):
        item_seq = self.reconstruct_test_data(item_seq, item_seq_len)
        seq_output = self.forward(item_seq)
        seq_output = self.gather_indexes(seq_output, item_seq_len - 1)  # [B H]
        test_items_emb = self.item_embedding.weight[
            : self.n_items
        ]  # delete masked token
        scores = torch.matmul(
            seq_output, test_items_emb.transpose(0, 1)
        )  # [B, item_num]
        return scores


def make():
    torch.manual_seed(0)
    return BERT4Rec().eval().full_sort_predict


def inputs():
    g = torch.Generator().manual_seed(19)
    calls = []
    for lengths in [[3, 6, 1], [6, 6], [1], [2, 5, 4, 3], [5], [4, 1], [6, 2, 2], [3, 3, 3]]:
        B = len(lengths)
        seq = torch.randint(1, 20, (B, 6), generator=g)
        for b, n in enumerate(lengths):
            seq[b, n:] = 0          # RecBole pads on the right
        calls.append((seq, torch.tensor(lengths)))
    return calls


KIND = "tensor-loop"
GRAD = True
