"""TRL GRPO loss (`GRPOTrainer.compute_loss`, trl 0.14): per-token log-probs of policy and reference
model, KL to the reference, completion mask up to the first EOS, group-normalised advantages, the
clipped-free GRPO token loss, and the logged mean KL.

Source: https://github.com/huggingface/trl/blob/v0.14.0/trl/trainer/grpo_trainer.py (`compute_loss`,
its nested `get_per_token_logps`); generation, decoding and the reward functions are reduced away (the
completions and their rewards are inputs), the models are a tiny embedding + linear LM, the reference
pass uses `torch.no_grad()` instead of `torch.inference_mode()` and the accelerator gathers are dropped.

Breaks: `eos_idx[is_eos.any(dim=1)] = is_eos.int().argmax(dim=1)[is_eos.any(dim=1)]` (boolean-mask gather
and index_put with a data-dependent number of rows); the logged metrics' `.item()` calls.

HAND: `eos_idx = torch.where(is_eos.any(dim=1), is_eos.int().argmax(dim=1), is_eos.size(1))` — the same
indices; the metrics are still appended as Python floats, so their `.item()` calls stay (partial).
"""

from collections import defaultdict

import torch
from torch import nn


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=12, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.mix = nn.Linear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids):
        h = self.embed(input_ids)
        # causal running mean as a stand-in for attention
        h = h.cumsum(dim=1) / torch.arange(1, input_ids.size(1) + 1, device=input_ids.device)[None, :, None]
        logits = self.lm_head(torch.tanh(self.mix(h)))
        return logits


class GRPOLoss(nn.Module):
    def __init__(self, eos_token_id=1, num_generations=2, beta=0.04):
        super().__init__()
        self.model = TinyCausalLM()
        self.ref_model = TinyCausalLM()
        self.ref_model.requires_grad_(False)
        self.eos_token_id = eos_token_id
        self.num_generations = num_generations
        self.beta = beta
        self._metrics = defaultdict(list)

    def forward(self, prompt_completion_ids, prompt_length: int, rewards):
        model = self.model
        completion_ids = prompt_completion_ids[:, prompt_length:]

        # Get the per-token log probabilities for the completions for the model and the reference model
        def get_per_token_logps(model, input_ids):
            logits = model(input_ids)  # (B, L, V)
            logits = logits[:, :-1, :]  # (B, L-1, V), exclude the last logit: it corresponds to the next token pred
            input_ids = input_ids[:, 1:]  # (B, L-1), exclude the first input ID since we don't have logits for it
            # Compute the log probabilities for the input tokens. Use a loop to reduce memory peak.
            per_token_logps = []
            for logits_row, input_ids_row in zip(logits, input_ids):
                log_probs = logits_row.log_softmax(dim=-1)
                token_log_prob = torch.gather(log_probs, dim=1, index=input_ids_row.unsqueeze(1)).squeeze(1)
                per_token_logps.append(token_log_prob)
            return torch.stack(per_token_logps)

        per_token_logps = get_per_token_logps(model, prompt_completion_ids)
        # Get rid of the prompt (-1 because of the shift done in get_per_token_logps)
        per_token_logps = per_token_logps[:, prompt_length - 1 :]

        with torch.no_grad():
            ref_per_token_logps = get_per_token_logps(self.ref_model, prompt_completion_ids)
        ref_per_token_logps = ref_per_token_logps[:, prompt_length - 1 :]

        # Compute the KL divergence between the model and the reference model
        per_token_kl = torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1

        # Mask everything after the first EOS token
        is_eos = completion_ids == self.eos_token_id
        device = completion_ids.device
        eos_idx = torch.full((is_eos.size(0),), is_eos.size(1), dtype=torch.long, device=device)
        eos_idx[is_eos.any(dim=1)] = is_eos.int().argmax(dim=1)[is_eos.any(dim=1)]
        sequence_indices = torch.arange(is_eos.size(1), device=device).expand(is_eos.size(0), -1)
        completion_mask = (sequence_indices <= eos_idx.unsqueeze(1)).int()

        # Compute grouped-wise rewards
        mean_grouped_rewards = rewards.view(-1, self.num_generations).mean(dim=1)
        std_grouped_rewards = rewards.view(-1, self.num_generations).std(dim=1)

        # Normalize the rewards to compute the advantages
        mean_grouped_rewards = mean_grouped_rewards.repeat_interleave(self.num_generations, dim=0)
        std_grouped_rewards = std_grouped_rewards.repeat_interleave(self.num_generations, dim=0)
        advantages = (rewards - mean_grouped_rewards) / (std_grouped_rewards + 1e-4)

        # x - x.detach() allows for preserving gradients from x
        per_token_loss = torch.exp(per_token_logps - per_token_logps.detach()) * advantages.unsqueeze(1)
        per_token_loss = -(per_token_loss - self.beta * per_token_kl)
        loss = ((per_token_loss * completion_mask).sum(dim=1) / completion_mask.sum(dim=1)).mean()

        # Log the metrics
        self._metrics["reward"].append(rewards.mean().item())
        self._metrics["reward_std"].append(std_grouped_rewards.mean().item())

        mean_kl = ((per_token_kl * completion_mask).sum(dim=1) / completion_mask.sum(dim=1)).mean()
        self._metrics["kl"].append(mean_kl.mean().item())

        return loss


def make():
    torch.manual_seed(0)
    m = GRPOLoss()
    with torch.no_grad():  # the reference starts as a copy of the policy, which has since moved a little
        for p, q in zip(m.ref_model.parameters(), m.model.parameters()):
            p.copy_(q + 0.05 * torch.randn_like(q))
    return m


def inputs():
    g = torch.Generator().manual_seed(0)
    cases = []
    for groups, prompt_len, comp_len, eos_rows in [(1, 3, 4, [0]), (2, 2, 5, [0, 1, 2, 3]), (2, 4, 3, []),
                                                   (1, 2, 6, [1]), (3, 3, 4, [0, 2, 4]), (2, 1, 5, [1, 2]),
                                                   (1, 4, 2, [0, 1]), (2, 3, 6, [3])]:
        b = groups * 2
        ids = torch.randint(2, 12, (b, prompt_len + comp_len), generator=g)
        for r in eos_rows:
            pos = int(torch.randint(0, comp_len, (1,), generator=g))
            ids[r, prompt_len + pos] = 1
            if pos + 2 < comp_len:
                ids[r, prompt_len + pos + 2] = 1  # a second EOS later in the row
        rewards = torch.randn(b, generator=g)
        cases.append((ids, prompt_len, rewards))
    return cases


KIND = "bool-mask-setitem+item"
GRAD = True
