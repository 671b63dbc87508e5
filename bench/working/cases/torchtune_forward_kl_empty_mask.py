"""torchtune's knowledge-distillation loss (forward KL between teacher and student token
distributions over the non-ignored labels); when every label is ignored it returns a constant 0.

Source: https://github.com/pytorch/torchtune/blob/main/torchtune/modules/loss/kd_losses.py
(`ForwardKLLoss.forward`, after https://github.com/jongwooko/distillm losses.py).

Breaks: `if sum_masks == 0:` -- a branch on a 0-d tensor (data-dependent).

HAND: none — on an all-ignored batch the original returns `torch.tensor(0.0)`, a fresh tensor with
no autograd history, so the student logits get no gradient (`None`); any branch-free form
(`torch.where(sum_masks == 0, 0, loss)`) is connected to the logits and gives them zero gradients
instead, which the caller can observe.
"""
import torch
import torch.nn.functional as F


class ForwardKLLoss(torch.nn.Module):
    """
    The Kullback-Leibler divergence loss for valid indexes.
    """

    def __init__(self, ignore_index: int = -100):
        super().__init__()
        self.ignore_index = ignore_index

    def forward(
        self,
        student_logits: torch.Tensor,
        teacher_logits: torch.Tensor,
        labels: torch.Tensor,
        normalize: bool = True,
    ) -> torch.Tensor:
        teacher_prob = F.softmax(teacher_logits, dim=-1, dtype=torch.float32)
        inf_mask = torch.isinf(student_logits)
        student_logprob = F.log_softmax(student_logits, dim=-1, dtype=torch.float32)
        prod_probs = torch.masked_fill(teacher_prob * student_logprob, inf_mask, 0)
        x = torch.sum(prod_probs, dim=-1).view(-1)
        mask = (labels != self.ignore_index).int()
        if not normalize:
            return -torch.sum(x * mask.view(-1), dim=0)

        sum_masks = torch.sum(mask.view(-1), dim=0)
        if sum_masks == 0:
            return torch.tensor(0.0, device=x.device)
        return -torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1), dim=0)


class DistillStep(torch.nn.Module):
    """Student head on hidden states; the teacher logits come precomputed (no gradient)."""

    def __init__(self):
        super().__init__()
        self.student_head = torch.nn.Linear(8, 12)
        self.kd_loss = ForwardKLLoss(ignore_index=-100)

    def forward(self, hidden, teacher_logits, labels, normalize=True):
        student_logits = self.student_head(hidden).reshape(-1, 12)
        return self.kd_loss(student_logits, teacher_logits.reshape(-1, 12), labels, normalize)


def make():
    torch.manual_seed(0)
    return DistillStep()


def inputs():
    g = torch.Generator().manual_seed(11)
    calls = []
    for n in range(9):
        hidden = torch.randn(2, 5, 8, generator=g)
        teacher = torch.randn(2, 5, 12, generator=g) * 2
        labels = torch.randint(0, 12, (2, 5), generator=g)
        if n in (1, 4, 7):
            labels[:] = -100          # an all-padding micro-batch
        elif n in (2, 5):
            labels[:, :2] = -100      # prompt tokens ignored
        calls.append((hidden, teacher.detach(), labels, n != 6 and n != 7))
    return calls


KIND = "branch"
GRAD = True
