"""PEFT AdaLoRA: after each optimizer step, `update_and_allocate` updates the EMA sensitivity /
uncertainty scores of every LoRA triplet (A, E, B) and, on the budget schedule, masks the least important
singular values `lora_E` below a threshold found with `torch.kthvalue`.

Source: https://github.com/huggingface/peft/blob/main/src/peft/tuners/adalora/layer.py
(`RankAllocator.update_ipt`, `_element_score`, `_combine_ipt`, `mask_to_budget`, `budget_schedule`,
`update_and_allocate`); the AdaLoRA layers are reduced to their `lora_A`/`lora_E`/`lora_B` parameter
dicts, and the gradients a backward pass would leave are set once in `make()`.

Breaks: `torch.kthvalue(...)[0].item()` (the threshold as a Python float) and
`(~(triplet_ipt[n] <= mask_threshold)).view(-1).tolist()` (the rank pattern as Python lists of bools).

HAND: the threshold stays a 0-d tensor (`masked_fill_` and the comparisons take it as is); the rank
pattern is returned as the same Python lists, so its `tolist()` stays (partial: 1 of 2 sites).
"""

import torch
from torch import nn


class AdaLoraConfig:
    target_r = 2
    init_r = 4
    tinit = 1
    tfinal = 2
    deltaT = 2
    beta1 = 0.85
    beta2 = 0.85
    total_step = 10


class AdaLoraLinear(nn.Module):
    """The parameters of an AdaLoRA `SVDLinear`: lora_A (r, in), lora_E (r, 1), lora_B (out, r)."""

    def __init__(self, in_features, out_features, r, adapter_name="default"):
        super().__init__()
        self.base_layer = nn.Linear(in_features, out_features)
        self.lora_A = nn.ParameterDict({adapter_name: nn.Parameter(torch.randn(r, in_features) * 0.02)})
        self.lora_E = nn.ParameterDict({adapter_name: nn.Parameter(torch.randn(r, 1))})
        self.lora_B = nn.ParameterDict({adapter_name: nn.Parameter(torch.randn(out_features, r) * 0.02)})


class TinyModel(nn.Module):
    def __init__(self, r):
        super().__init__()
        self.q_proj = AdaLoraLinear(6, 6, r)
        self.v_proj = AdaLoraLinear(6, 6, r)
        self.fc = AdaLoraLinear(6, 4, r)


class RankAllocator:
    """
    The RankAllocator for AdaLoraModel. Paper: https://openreview.net/pdf?id=lq62uWRJjiY
    """

    def __init__(self, model, peft_config, adapter_name):
        self.peft_config = peft_config
        self.adapter_name = adapter_name
        self.beta1 = peft_config.beta1
        self.beta2 = peft_config.beta2
        assert self.beta1 > 0 and self.beta1 < 1
        assert self.beta2 > 0 and self.beta2 < 1

        self.reset_ipt()
        self._set_budget_scheduler(model)

    def reset_ipt(self):
        self.ipt = {}
        self.exp_avg_ipt = {}
        self.exp_avg_unc = {}

    def _set_budget_scheduler(self, model):
        self.init_bgt = 0
        self.name_set = set()
        for n, p in model.named_parameters():
            if f"lora_A.{self.adapter_name}" in n:
                self.init_bgt += p.size(0)
                self.name_set.add(n.replace("lora_A", "%s"))
        self.name_set = sorted(self.name_set)
        # The total final rank budget
        self.target_bgt = self.peft_config.target_r * len(self.name_set)

    def budget_schedule(self, step: int):
        tinit = self.peft_config.tinit
        tfinal = self.peft_config.tfinal
        total_step = self.peft_config.total_step
        # Initial warmup
        if step <= tinit:
            budget = self.init_bgt
            mask_ind = False
        # Final fine-tuning
        elif step > total_step - tfinal:
            budget = self.target_bgt
            mask_ind = True
        else:
            # Budget decreasing with a cubic scheduler
            mul_coeff = 1 - (step - tinit) / (total_step - tfinal - tinit)
            budget = int((self.init_bgt - self.target_bgt) * (mul_coeff**3) + self.target_bgt)
            mask_ind = True if step % self.peft_config.deltaT == 0 else False
        return budget, mask_ind

    def update_ipt(self, model):
        # Update the sensitivity and uncertainty for every weight
        for n, p in model.named_parameters():
            if "lora_" in n and self.adapter_name in n:
                if n not in self.ipt:
                    self.ipt[n] = torch.zeros_like(p)
                    self.exp_avg_ipt[n] = torch.zeros_like(p)
                    self.exp_avg_unc[n] = torch.zeros_like(p)
                with torch.no_grad():
                    self.ipt[n] = (p * p.grad).abs().detach()
                    # Sensitivity smoothing
                    self.exp_avg_ipt[n] = self.beta1 * self.exp_avg_ipt[n] + (1 - self.beta1) * self.ipt[n]
                    # Uncertainty quantification
                    self.exp_avg_unc[n] = (
                        self.beta2 * self.exp_avg_unc[n] + (1 - self.beta2) * (self.ipt[n] - self.exp_avg_ipt[n]).abs()
                    )

    def _element_score(self, n):
        return self.exp_avg_ipt[n] * self.exp_avg_unc[n]

    def _combine_ipt(self, ipt_E, ipt_AB):
        ipt_AB = ipt_AB.sum(dim=1, keepdim=False)
        sum_ipt = ipt_E.view(-1) + ipt_AB.view(-1)
        return sum_ipt

    def mask_to_budget(self, model, budget):
        value_ipt = {}
        vector_ipt = {}
        triplet_ipt = {}
        # Get the importance score for A, E, B
        for n, p in model.named_parameters():
            if f"lora_A.{self.adapter_name}" in n:
                entry_ipt = self._element_score(n)
                comb_ipt = torch.mean(entry_ipt, dim=1, keepdim=True)
                name_m = n.replace("lora_A", "%s")
                if name_m not in vector_ipt:
                    vector_ipt[name_m] = [comb_ipt]
                else:
                    vector_ipt[name_m].append(comb_ipt)
            if f"lora_B.{self.adapter_name}" in n:
                entry_ipt = self._element_score(n)
                comb_ipt = torch.mean(entry_ipt, dim=0, keepdim=False).view(-1, 1)
                name_m = n.replace("lora_B", "%s")
                if name_m not in vector_ipt:
                    vector_ipt[name_m] = [comb_ipt]
                else:
                    vector_ipt[name_m].append(comb_ipt)
            if f"lora_E.{self.adapter_name}" in n:
                entry_ipt = self._element_score(n)
                name_m = n.replace("lora_E", "%s")
                value_ipt[name_m] = entry_ipt

        all_score = []
        # Calculate the score for each triplet
        for name_m in vector_ipt:
            ipt_E = value_ipt[name_m]
            ipt_AB = torch.cat(vector_ipt[name_m], dim=1)
            sum_ipt = self._combine_ipt(ipt_E, ipt_AB)
            name_E = name_m % "lora_E"
            triplet_ipt[name_E] = sum_ipt.view(-1, 1)
            all_score.append(sum_ipt.view(-1))

        # Get the threshold by ranking ipt
        mask_threshold = torch.kthvalue(
            torch.cat(all_score),
            k=self.init_bgt - budget,
        )[0].item()

        rank_pattern = {}
        # Mask the unimportant triplets
        with torch.no_grad():
            for n, p in model.named_parameters():
                if f"lora_E.{self.adapter_name}" in n:
                    p.masked_fill_(triplet_ipt[n] <= mask_threshold, 0.0)
                    rank_pattern[n] = (~(triplet_ipt[n] <= mask_threshold)).view(-1).tolist()
        return rank_pattern

    def update_and_allocate(self, model, global_step, force_mask=False):
        # # Update the importance score and allocate the budget
        if global_step < self.peft_config.total_step - self.peft_config.tfinal:
            self.update_ipt(model)
        budget, mask_ind = self.budget_schedule(global_step)
        # Allocate the budget according to importance scores
        if mask_ind or force_mask:
            rank_pattern = self.mask_to_budget(model, budget)
        else:
            rank_pattern = None
        return budget, rank_pattern


class AdaLoraModel(nn.Module):
    """What `AdaLoraModel.update_and_allocate(global_step)` runs after `optimizer.step()`."""

    def __init__(self):
        super().__init__()
        self.model = TinyModel(AdaLoraConfig.init_r)
        self.rankallocator = RankAllocator(self.model, AdaLoraConfig(), "default")

    def forward(self, global_step, grad_scale):
        # the gradients a backward pass left (scaled per step so that the scores move)
        with torch.no_grad():
            for n, p in self.model.named_parameters():
                if "lora_" in n:
                    p.grad.mul_(grad_scale)
        return self.rankallocator.update_and_allocate(self.model, global_step)


def make():
    torch.manual_seed(0)
    m = AdaLoraModel()
    for _, p in m.model.named_parameters():
        p.grad = torch.randn_like(p)
    return m


def inputs():
    # steps 0..9 of a 10-step run: warmup (no mask), cubic budget on every deltaT-th step, final phase
    return [(step, torch.tensor(s)) for step, s in
            [(0, 1.0), (1, 1.5), (2, 0.8), (3, 1.2), (4, 0.9), (5, 1.1), (6, 1.3), (7, 0.7), (8, 1.0), (9, 1.4)]]


KIND = "item+tolist"
