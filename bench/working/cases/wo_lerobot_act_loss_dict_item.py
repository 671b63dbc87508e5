"""LeRobot's ACT policy (Action Chunking Transformer) training forward: predict an action chunk
(and, with the VAE objective, the latent posterior), then an L1 loss on the non-padded actions plus
an optional KL term; the individual loss terms are logged as Python floats in `loss_dict`.

Source: https://github.com/huggingface/lerobot/pull/2159 ("Make ACT policy compatible with
`torch.compile`": "TorchDynamo emitted graph-break warnings due to the use of `Tensor.item()` inside
the `forward()` method of `ACTPolicy` ... Graph break from `Tensor.item()`"), also reported for pi0
in https://github.com/huggingface/lerobot/pull/729 and tracked in
https://github.com/huggingface/lerobot/issues/2061; code before the PR at
https://github.com/huggingface/lerobot/blob/main/src/lerobot/policies/act/modeling_act.py
(`ACTPolicy.forward`). Reduced: the ACT network (ResNet backbone, transformer encoder/decoder, VAE
encoder) is a tiny stand-in with the same interface (`self.model(batch)` returns
`actions_hat, (mu_hat, log_sigma_x2_hat)`, the latter `(None, None)` without the VAE); its latent is
the posterior mean (no sampling); one camera of 3x4x4 pixels, chunk of 3 actions of dim 2.

Breaks: `loss_dict = {"l1_loss": l1_loss.item()}` and `loss_dict["kld_loss"] = mean_kld.item()`
(Tensor.item()).

HAND: none — `forward` returns the loss terms to the caller as Python floats (`loss_dict`), which
needs the device-to-host `.item()` reads; the PR's fix returns detached tensors instead, which
changes what the caller receives.
"""
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

KIND = "item"
GRAD = True

ACTION = "action"
OBS_STATE = "observation.state"
OBS_IMAGES = "observation.images"


@dataclass
class ACTConfig:
    image_features: tuple = ("observation.images.top",)
    state_dim: int = 2
    action_dim: int = 2
    chunk_size: int = 3
    latent_dim: int = 4
    use_vae: bool = True
    kl_weight: float = 10.0


class ACT(nn.Module):
    """Tiny stand-in for lerobot's ACT network, same inputs and outputs."""

    def __init__(self, config: ACTConfig):
        super().__init__()
        self.config = config
        self.backbone = nn.Conv2d(3, 4, kernel_size=3, padding=1)
        self.vae_encoder = nn.Linear(config.state_dim + config.chunk_size * config.action_dim, 2 * config.latent_dim)
        self.decoder = nn.Linear(4 + config.state_dim + config.latent_dim, config.chunk_size * config.action_dim)

    def forward(self, batch: dict[str, Tensor]):
        b = batch[OBS_STATE].shape[0]
        if self.config.use_vae and self.training:
            enc = self.vae_encoder(torch.cat([batch[OBS_STATE], batch[ACTION].flatten(1)], dim=-1))
            mu, log_sigma_x2 = enc[:, : self.config.latent_dim], enc[:, self.config.latent_dim :]
            latent = mu
        else:
            mu = log_sigma_x2 = None
            latent = batch[OBS_STATE].new_zeros(b, self.config.latent_dim)
        feats = torch.stack([self.backbone(img).mean(dim=(-2, -1)) for img in batch[OBS_IMAGES]]).sum(0)
        out = self.decoder(torch.cat([feats, batch[OBS_STATE], latent], dim=-1))
        return out.view(b, self.config.chunk_size, self.config.action_dim), (mu, log_sigma_x2)


class ACTPolicy(nn.Module):
    def __init__(self, config: ACTConfig):
        super().__init__()
        self.config = config
        self.model = ACT(config)

    def forward(self, batch: dict[str, Tensor]) -> tuple[Tensor, dict]:
        """Run the batch through the model and compute the loss for training or validation."""
        if self.config.image_features:
            batch = dict(batch)  # shallow copy so that adding a key doesn't modify the original
            batch[OBS_IMAGES] = [batch[key] for key in self.config.image_features]

        actions_hat, (mu_hat, log_sigma_x2_hat) = self.model(batch)

        l1_loss = (
            F.l1_loss(batch[ACTION], actions_hat, reduction="none") * ~batch["action_is_pad"].unsqueeze(-1)
        ).mean()

        loss_dict = {"l1_loss": l1_loss.item()}
        if self.config.use_vae:
            # Calculate Dₖₗ(latent_pdf || standard_normal). Note: After computing the KL-divergence for
            # each dimension independently, we sum over the latent dimension to get the total
            # KL-divergence per batch element, then take the mean over the batch.
            # (See App. B of https://huggingface.co/papers/1312.6114 for more details).
            mean_kld = (
                (-0.5 * (1 + log_sigma_x2_hat - mu_hat.pow(2) - (log_sigma_x2_hat).exp())).sum(-1).mean()
            )
            loss_dict["kld_loss"] = mean_kld.item()
            loss = l1_loss + mean_kld * self.config.kl_weight
        else:
            loss = l1_loss

        return loss, loss_dict


def make():
    torch.manual_seed(0)
    return ACTPolicy(ACTConfig())


def inputs():
    g = torch.Generator().manual_seed(5)

    def batch(b, pad_from=None):
        pad = torch.zeros(b, 3, dtype=torch.bool)
        if pad_from is not None:
            pad[:, pad_from:] = True
        return {
            OBS_STATE: torch.randn(b, 2, generator=g),
            "observation.images.top": torch.rand(b, 3, 4, 4, generator=g),
            ACTION: torch.randn(b, 3, 2, generator=g),
            "action_is_pad": pad,
        }

    return [
        (batch(2),),
        (batch(1),),
        (batch(3, pad_from=2),),
        (batch(2, pad_from=1),),
        (batch(4),),
        (batch(1, pad_from=0),),      # everything padded: l1 is 0
        (batch(2),),
        (batch(3, pad_from=1),),
    ]
