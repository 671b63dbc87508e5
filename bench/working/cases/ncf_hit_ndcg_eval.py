"""Neural Collaborative Filtering evaluation (HR@K / NDCG@K) for one test user: score the positive
item and its sampled negatives with NeuMF, take the top-K items, and compute the hit and the NDCG
of the ground-truth item on Python lists (with the debugging prints of the source).

Source: https://github.com/guoyang9/NCF/blob/master/evaluate.py (`hit`, `ndcg`, the body of the
loop in `metrics`) and https://github.com/guoyang9/NCF/blob/master/model.py (`NCF`, NeuMF-end).

Breaks: the `print(...)` calls, `torch.take(item, indices).cpu().numpy().tolist()` and
`item[0].item()` (host values), then `gt_item in pred_items` / `pred_items.index(...)` on lists.

HAND: none — the metrics are Python/NumPy numbers (`1`, `0`, `np.float64`) that the caller averages
with `np.mean`, computed from Python lists of item ids, and the prints show the tensors.
"""
import numpy as np
import torch
import torch.nn as nn


def hit(gt_item, pred_items):
    if gt_item in pred_items:
        return 1
    return 0


def ndcg(gt_item, pred_items):
    if gt_item in pred_items:
        index = pred_items.index(gt_item)
        return np.reciprocal(np.log2(index + 2))
    return 0


class NCF(nn.Module):
    def __init__(self, user_num, item_num, factor_num, num_layers, dropout, model):
        super(NCF, self).__init__()
        self.dropout = dropout
        self.model = model

        self.embed_user_GMF = nn.Embedding(user_num, factor_num)
        self.embed_item_GMF = nn.Embedding(item_num, factor_num)
        self.embed_user_MLP = nn.Embedding(user_num, factor_num * (2 ** (num_layers - 1)))
        self.embed_item_MLP = nn.Embedding(item_num, factor_num * (2 ** (num_layers - 1)))

        MLP_modules = []
        for i in range(num_layers):
            input_size = factor_num * (2 ** (num_layers - i))
            MLP_modules.append(nn.Dropout(p=self.dropout))
            MLP_modules.append(nn.Linear(input_size, input_size // 2))
            MLP_modules.append(nn.ReLU())
        self.MLP_layers = nn.Sequential(*MLP_modules)

        if self.model in ['MLP', 'GMF']:
            predict_size = factor_num
        else:
            predict_size = factor_num * 2
        self.predict_layer = nn.Linear(predict_size, 1)

    def forward(self, user, item):
        if not self.model == 'MLP':
            embed_user_GMF = self.embed_user_GMF(user)
            embed_item_GMF = self.embed_item_GMF(item)
            output_GMF = embed_user_GMF * embed_item_GMF
        if not self.model == 'GMF':
            embed_user_MLP = self.embed_user_MLP(user)
            embed_item_MLP = self.embed_item_MLP(item)
            interaction = torch.cat((embed_user_MLP, embed_item_MLP), -1)
            output_MLP = self.MLP_layers(interaction)

        if self.model == 'GMF':
            concat = output_GMF
        elif self.model == 'MLP':
            concat = output_MLP
        else:
            concat = torch.cat((output_GMF, output_MLP), -1)

        prediction = self.predict_layer(concat)
        return prediction.view(-1)


class EvalStep(nn.Module):
    def __init__(self, top_k=3):
        super().__init__()
        self.model = NCF(user_num=6, item_num=30, factor_num=4, num_layers=2, dropout=0.0, model='NeuMF-end')
        self.top_k = top_k

    def forward(self, user, item, label):
        print('METRICS: ')
        print('user: ', user.shape)
        print(user)
        print('item: ', item.shape)
        print(item)
        print('label: ', label.shape)
        print(label)

        predictions = self.model(user, item)
        _, indices = torch.topk(predictions, self.top_k)
        recommends = torch.take(
            item, indices).cpu().numpy().tolist()

        gt_item = item[0].item()
        return hit(gt_item, recommends), ndcg(gt_item, recommends)


def make():
    torch.manual_seed(0)
    return EvalStep(top_k=3).eval()


def inputs():
    g = torch.Generator().manual_seed(4)
    calls = []
    for u in range(8):
        items = torch.randperm(30, generator=g)[:8]     # the positive first, then 7 sampled negatives
        user = torch.full((8,), u % 6, dtype=torch.long)
        label = torch.zeros(8)
        label[0] = 1.0
        calls.append((user, items, label))
    return calls


KIND = "print+tolist"
