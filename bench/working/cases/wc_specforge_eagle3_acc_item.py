"""SpecForge's online EAGLE-3 draft-model training step (test-time-training unroll): for each of the
`length` draft steps it runs the draft layer, computes the soft-label loss against the target
model's distribution and, under `no_grad`, the step's accuracy as
`((logits.argmax(-1) == target_p.argmax(-1)) * position_mask.squeeze(-1)).sum().item() /
(loss_mask.sum().item() + 1e-6)`, a Python float appended to `acces`; then inputs, targets and the
loss mask shift one token left. The PR reports the `Graph break from Tensor.item()` warnings at that
line while training Eagle3 under torch.compile.

Source: https://github.com/sgl-project/SpecForge/pull/222 ("Fix Graph break from `Tensor.item()`",
log: specforge/core/eagle3.py `_compute_metric_acc`, `).sum().item() / (loss_mask.sum().item() +
1e-6)`), code from https://github.com/sgl-project/SpecForge/blob/main/specforge/core/eagle3.py
(`OnlineEagle3Model.forward`, `_compute_target_p`, `_compute_metric_acc`, `padding`) before that PR;
the same accuracy line is in https://github.com/SafeAILab/EAGLE (eagle/traineagle3/cnets.py). The
draft model is reduced to an fc over the three auxiliary hidden states, one gated layer over
[embedding, hidden] and an lm head; the draft vocabulary is the target vocabulary (no t2d/d2t map).

Breaks: `.sum().item()` in `_compute_metric_acc` (Tensor.item()), in every step of the unroll loop.

HAND: none — the step returns the accuracies as Python floats (the training loop logs them), so a
device-to-host read stays (keeping the counts as tensors and reading them once after the loop moves
the break out of the loop but leaves one site); the PR's fix returns tensors instead and changes
`+ 1e-6` into `.clamp_min(1e-6)`: a different return type and a different value.
"""
import torch
import torch.nn.functional as F
from torch import nn

KIND = "item-loop"
GRAD = True


def padding(tensor, left=True):
    zeropadding = torch.zeros_like(tensor[:, -1:])
    if left:
        tensor = torch.cat((zeropadding, tensor[:, :-1]), dim=1)
    else:
        tensor = torch.cat((tensor[:, 1:], zeropadding), dim=1)
    return tensor


def _compute_target_p(target, loss_mask):
    target_head = target
    target_max_token = target_head.argmax(-1)
    target_mask = torch.ones_like(target_max_token)[..., None].int()  # every target token is in the draft vocab
    position_mask = target_mask * loss_mask
    target_head = target_head.float()
    target_p = nn.Softmax(dim=2)(target_head)
    target_p = target_p.detach()
    return target_p, position_mask


def _compute_metric_acc(logits, target_p, position_mask, loss_mask):
    return (
        (logits.argmax(-1) == target_p.argmax(-1)) * position_mask.squeeze(-1)
    ).sum().item() / (loss_mask.sum().item() + 1e-6)


class TinyEagle3Draft(nn.Module):
    def __init__(self, vocab=12, hidden=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.embed_tokens.weight.requires_grad_(False)  # the target model's embedding, frozen
        self.fc = nn.Linear(3 * hidden, hidden, bias=False)
        self.midlayer = nn.Linear(2 * hidden, 2 * hidden)
        self.norm = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def project_hidden_states(self, x):
        return self.fc(x)

    def backbone(self, input_embeds, hidden_states):
        a, g = self.midlayer(torch.cat((input_embeds, hidden_states), dim=-1)).chunk(2, dim=-1)
        return hidden_states + a * torch.sigmoid(g)

    def compute_logits(self, hidden_states):
        return self.lm_head(self.norm(hidden_states))


class OnlineEagle3Model(nn.Module):
    def __init__(self, length=3):
        super().__init__()
        self.draft_model = TinyEagle3Draft()
        self.length = length

    def forward(self, input_ids, loss_mask, hidden_states, target):
        # hidden_states: the target model's three auxiliary layers, concatenated
        hidden_states = self.draft_model.project_hidden_states(hidden_states)
        plosses, vlosses, acces = [], [], []
        for idx in range(self.length):
            is_last = idx == self.length - 1
            inputs_embeds = self.draft_model.embed_tokens(input_ids).to(hidden_states.dtype)
            target_p, position_mask = _compute_target_p(target=target, loss_mask=loss_mask)

            hidden_states_out = self.draft_model.backbone(inputs_embeds, hidden_states)
            hidden_states = hidden_states_out
            logits = self.draft_model.compute_logits(hidden_states)

            with torch.no_grad():
                acces.append(_compute_metric_acc(logits, target_p, position_mask, loss_mask))

            out_logp = nn.LogSoftmax(dim=2)(logits)
            plogp = target_p * out_logp
            loss = -torch.sum(position_mask * plogp, 2).mean()
            plosses.append(loss)

            if not is_last:
                input_ids = padding(input_ids, left=False)
                target = padding(target, left=False)
                loss_mask = padding(loss_mask, left=False)
        return plosses, vlosses, acces


def make():
    torch.manual_seed(0)
    return OnlineEagle3Model()


def inputs():
    torch.manual_seed(0)
    out = []
    for b, s, n_prompt in [(1, 6, 2), (2, 8, 3), (1, 4, 0), (2, 5, 4), (3, 3, 1), (1, 7, 7), (2, 6, 1), (1, 9, 5)]:
        input_ids = torch.randint(0, 12, (b, s))
        loss_mask = torch.zeros(b, s, 1, dtype=torch.long)
        loss_mask[:, n_prompt:] = 1  # assistant tokens only; (1, 7, 7) has none: accuracy 0.0
        aux = torch.randn(b, s, 24)
        target = torch.randn(b, s, 12) * 3
        out.append((input_ids, loss_mask, aux, target))
    return out
