"""Hand rewrite of cases/wo_liger_grpo_sapo_mask_assign.py: the two boolean-mask writes of the SAPO
branch become one `torch.where` over the advantage-sign mask."""
import torch

KIND = "mask-setitem"
GRAD = True


def k3_loss_fn(log_p, log_q):
    # computes k3 estimate of KL[q, p]
    # ref: http://joschu.net/blog/kl-approx.html
    return torch.exp(log_p - log_q) - (log_p - log_q) - 1.0


def sapo_loss_fn(importance_ratio: torch.Tensor, temperature: float) -> torch.Tensor:
    """SAPO (Soft Adaptive Policy Optimization) loss function."""
    if temperature <= 0:
        raise ValueError("sapo_temperature must be > 0.")
    sigmoid_input = temperature * (importance_ratio - 1)
    sigmoid_smoothed_loss = torch.sigmoid(sigmoid_input)
    return sigmoid_smoothed_loss * 4 / temperature


def clip_coef_fn(coef, epsilon_low, epsilon_high, loss_type):
    if loss_type == "cispo":
        # CISPO: clip and detach the importance weights
        upper_bound = epsilon_high
        lower_bound = None
        clipped_coef = torch.clamp(coef, lower_bound, upper_bound).detach()
        is_lower_clipped = False
        is_upper_clipped = coef > upper_bound
    elif loss_type == "sapo":
        # SAPO doesn't use clipping metrics
        clipped_coef = None
        is_lower_clipped = torch.zeros_like(coef, dtype=torch.bool)
        is_upper_clipped = torch.zeros_like(coef, dtype=torch.bool)
    else:
        upper_bound = 1 + epsilon_high
        lower_bound = 1 - epsilon_low
        clipped_coef = torch.clamp(coef, lower_bound, upper_bound)
        is_lower_clipped = coef < lower_bound
        is_upper_clipped = coef > upper_bound
    return clipped_coef, is_lower_clipped, is_upper_clipped


def _compute_dapo_normalizer(attention_mask):
    """Global active tokens averaged per process (single process here)."""
    normalizer = attention_mask.to(torch.float32).sum()
    return torch.clamp(normalizer, min=1.0)


def ppo_loss_fn(
    log_probs,
    selected_token_ids,
    attention_mask,
    advantages,
    full_attention_mask,
    ref_per_token_logps=None,  # shape: [chunk_size, seq_len]
    old_per_token_logps=None,
    ref_log_probs=None,  # used when ref_per_token_logps is None (shape: [chunk_size, seq_len, vocab_size])
    epsilon_low=0.2,
    epsilon_high=0.2,
    beta=0.04,
    loss_type="dapo",  # ["grpo", "bnpo", "dr_grpo", "dapo", "cispo", "sapo"]
    max_completion_length=None,  # Required for dr_grpo
    importance_sampling_level="token",  # ["token", "sequence"] - new parameter for GSPO
    sapo_temperature_pos=1.0,  # Temperature for positive advantages in SAPO
    sapo_temperature_neg=1.05,  # Temperature for negative advantages in SAPO
    **kwargs,
):
    """GRPO Loss Function matching GRPOTrainer implementation."""
    per_token_logps = log_probs.gather(dim=-1, index=selected_token_ids.unsqueeze(-1)).squeeze(
        -1
    )  # (batch_size, seq_len)

    # Get reference model probabilities
    if ref_per_token_logps is None:
        if ref_log_probs is not None:
            with torch.no_grad():
                ref_per_token_logps = ref_log_probs.gather(dim=-1, index=selected_token_ids.unsqueeze(-1)).squeeze(
                    -1
                )
        else:
            ref_per_token_logps = per_token_logps.detach()

    # Compute policy gradient loss with importance sampling ratio
    old_per_token_logps = old_per_token_logps if old_per_token_logps is not None else per_token_logps.detach()
    log_ratio = per_token_logps - old_per_token_logps

    if importance_sampling_level == "token":
        log_importance_weights = log_ratio
    elif importance_sampling_level == "sequence":
        log_importance_weights = (log_ratio * attention_mask).sum(-1) / attention_mask.sum(-1).clamp(min=1.0)
        log_importance_weights = log_importance_weights.unsqueeze(-1)
    else:
        raise ValueError(
            f"Unknown importance sampling level: {importance_sampling_level}. Possible values are 'token' "
            "and 'sequence'."
        )

    # From here, log_importance_weights (and all subsequent tensors, coef_1, coef_2, etc.) shape depends on
    # importance_sampling_level: "token" level: (B, T); "sequence" level: (B, 1)
    coef_1 = torch.exp(log_importance_weights)
    coef_2, is_lower_clipped, is_upper_clipped = clip_coef_fn(coef_1, epsilon_low, epsilon_high, loss_type)
    if loss_type == "cispo":
        # CISPO: clip and detach the importance weights, multiply by log probs
        per_token_loss = -coef_2 * advantages.unsqueeze(1) * per_token_logps
    elif loss_type == "sapo":
        # SAPO: Soft Adaptive Policy Optimization
        # Uses sigmoid-based soft gating instead of hard clipping
        # Expand advantages to match coef_1 shape for masking
        advantages_expanded = advantages.unsqueeze(1).expand_as(coef_1)
        positive_advantages_mask = advantages_expanded > 0

        # Apply different temperatures based on advantage sign
        per_token_loss = torch.where(
            positive_advantages_mask,
            sapo_loss_fn(coef_1, sapo_temperature_pos),
            sapo_loss_fn(coef_1, sapo_temperature_neg),
        )
        per_token_loss = -per_token_loss * advantages_expanded
    else:
        per_token_loss1 = coef_1 * advantages.unsqueeze(1)
        per_token_loss2 = coef_2 * advantages.unsqueeze(1)
        per_token_loss = -torch.min(per_token_loss1, per_token_loss2)

    if beta != 0.0:
        # Compute KL penalty (approximates KL[per_token_logps, ref_per_token_logps])
        kl_div = k3_loss_fn(ref_per_token_logps, per_token_logps)
        # Combine losses
        per_token_loss = per_token_loss + beta * kl_div

    # Note: We normalize by the number of tokens in the batch (using full_attention_mask),
    # which is consistent with the DAPO loss implementation (https://arxiv.org/html/2503.14476v1)
    # and TRL GRPO implementation
    if loss_type == "grpo" or loss_type == "sapo":
        # Average per-sequence loss (SAPO uses same normalization as GRPO)
        loss = (
            (per_token_loss * attention_mask).sum(-1) / torch.clamp(attention_mask.sum(-1), min=1.0)
        ).sum() / full_attention_mask.shape[0]
    elif loss_type == "bnpo":
        # Batch Normalized Per-token loss (original implementation)
        loss = (per_token_loss * attention_mask).sum() / torch.clamp(full_attention_mask.sum(), min=1.0)
    elif loss_type == "dr_grpo":
        # Dimension-Reduced GRPO (normalize by batch_size * max_completion_length)
        if max_completion_length is None:
            raise ValueError("max_completion_length must be provided for loss_type 'dr_grpo'")
        loss = (per_token_loss * attention_mask).sum() / (full_attention_mask.shape[0] * max_completion_length)
    elif loss_type == "dapo" or loss_type == "cispo":
        loss_normalizer = _compute_dapo_normalizer(full_attention_mask)
        loss = (per_token_loss * attention_mask).sum() / loss_normalizer
    else:
        raise ValueError(f"Unknown loss type: {loss_type}")

    # Calculate metrics
    metrics = []
    if beta != 0.0:
        metrics.append(((kl_div * attention_mask).sum() / torch.clamp(full_attention_mask.sum(), min=1.0)))

    # Adjust clipping metric calculation based on importance sampling level
    if importance_sampling_level == "token":
        is_clipped = (is_lower_clipped & (advantages.unsqueeze(1) < 0)) | (
            is_upper_clipped & (advantages.unsqueeze(1) > 0)
        )
    else:  # sequence level
        # For sequence level, coef_1 is shape (B, 1), advantages is shape (B,)
        is_clipped = (is_lower_clipped & (advantages.unsqueeze(1) < 0)) | (
            is_upper_clipped & (advantages.unsqueeze(1) > 0)
        )
        is_clipped = is_clipped.expand_as(attention_mask)

    metrics.append((is_clipped * attention_mask).sum() / torch.clamp(full_attention_mask.sum(), min=1.0))
    return loss, metrics


def make():
    return ppo_loss_fn


def _batch(g, B, T, V=6, adv=None, pad=True):
    log_probs = torch.log_softmax(torch.randn(B, T, V, generator=g), dim=-1)
    ids = torch.randint(0, V, (B, T), generator=g)
    mask = torch.ones(B, T)
    if pad:
        mask[0, -1] = 0.0
    advantages = torch.randn(B, generator=g) if adv is None else torch.tensor(adv)
    old = log_probs.gather(-1, ids.unsqueeze(-1)).squeeze(-1) + 0.3 * torch.randn(B, T, generator=g)
    ref = log_probs.gather(-1, ids.unsqueeze(-1)).squeeze(-1) + 0.2 * torch.randn(B, T, generator=g)
    return log_probs, ids, mask, advantages, mask.clone(), ref, old


def inputs():
    g = torch.Generator().manual_seed(7)
    return [
        (*_batch(g, 3, 4, adv=[1.0, -0.5, 0.0]), None, 0.2, 0.2, 0.04, "sapo"),
        (*_batch(g, 2, 5, adv=[0.7, 1.2]), None, 0.2, 0.2, 0.0, "sapo"),               # all positive
        (*_batch(g, 2, 3, adv=[-0.7, 0.0], pad=False), None, 0.2, 0.2, 0.1, "sapo"),   # none positive
        (*_batch(g, 3, 4, adv=[0.3, -1.0, 2.0]), None, 0.2, 0.2, 0.04, "sapo", None, "sequence", 0.5, 2.0),
        (*_batch(g, 2, 4), None, 0.2, 0.28, 0.04, "grpo"),
        (*_batch(g, 3, 3), None, 0.2, 0.2, 0.0, "bnpo"),
        (*_batch(g, 2, 4), None, 0.2, 0.2, 0.04, "dr_grpo", 6),
        (*_batch(g, 2, 5), None, 0.2, 5.0, 0.0, "cispo"),
        (*_batch(g, 3, 4), None, 0.2, 0.2, 0.04, "dapo", None, "sequence"),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(8)
    return [
        (*_batch(g, 2, 3), None, 0.2, 0.2, 0.04, "dr_grpo"),     # max_completion_length missing
        (*_batch(g, 2, 3), None, 0.2, 0.2, 0.04, "sapo", None, "token", 0.0, 1.05),  # bad temperature
    ]
