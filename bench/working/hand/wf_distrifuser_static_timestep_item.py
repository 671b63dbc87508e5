"""Hand rewrite of cases/wf_distrifuser_static_timestep_item.py: a 0-d timestep is written into
every row of the static buffer with `fill_` (no `.item()`)."""
import math

import torch
from torch import nn

KIND = "item-copy"


class TinyUNet(nn.Module):
    def __init__(self, c=4, d=8):
        super().__init__()
        self.conv_in = nn.Conv2d(c, d, 1)
        self.time_proj = nn.Linear(d, d)
        self.ctx_proj = nn.Linear(d, d)
        self.conv_out = nn.Conv2d(d, c, 1)
        self.d = d

    def forward(self, sample, timestep, encoder_hidden_states):
        half = self.d // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
        args = timestep.float()[:, None] * freqs[None]
        temb = self.time_proj(torch.cat([torch.cos(args), torch.sin(args)], dim=-1))
        ctx = self.ctx_proj(encoder_hidden_states.mean(1))
        h = self.conv_in(sample) + (temb + ctx)[:, :, None, None]
        return self.conv_out(torch.nn.functional.silu(h))


class DistriUNetPP(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = TinyUNet()
        self.register_buffer("static_sample", torch.zeros(2, 4, 4, 4))
        self.register_buffer("static_timestep", torch.zeros(2))
        self.register_buffer("static_encoder_hidden_states", torch.zeros(2, 3, 8))
        self.static_inputs = {
            "sample": self.static_sample,
            "timestep": self.static_timestep,
            "encoder_hidden_states": self.static_encoder_hidden_states,
        }

    def forward(self, sample, timestep, encoder_hidden_states):
        static_inputs = self.static_inputs

        assert static_inputs["sample"].shape == sample.shape
        static_inputs["sample"].copy_(sample)
        if torch.is_tensor(timestep):
            if timestep.ndim == 0:
                static_inputs["timestep"].fill_(timestep)
            else:
                assert static_inputs["timestep"].shape == timestep.shape
                static_inputs["timestep"].copy_(timestep)
        else:
            for b in range(static_inputs["timestep"].shape[0]):
                static_inputs["timestep"][b] = timestep
        assert static_inputs["encoder_hidden_states"].shape == encoder_hidden_states.shape
        static_inputs["encoder_hidden_states"].copy_(encoder_hidden_states)

        # stands in for self.cuda_graphs[graph_idx].replay(); output = self.static_outputs[graph_idx]
        output = self.model(static_inputs["sample"], static_inputs["timestep"], static_inputs["encoder_hidden_states"])
        return (output,)


def make():
    torch.manual_seed(0)
    return DistriUNetPP().eval()


def inputs():
    g = torch.Generator().manual_seed(5)

    def s():
        return torch.randn(2, 4, 4, 4, generator=g)

    def e():
        return torch.randn(2, 3, 8, generator=g)

    return [
        (s(), torch.tensor(999.0), e()),                          # 0-d float timestep: .item()
        (s(), torch.tensor(501), e()),                            # 0-d int64 timestep
        (s(), torch.tensor([981.0, 981.0]), e()),                 # per-sample timesteps: copy_
        (s(), 21, e()),                                           # Python int
        (s(), torch.tensor(0.5, dtype=torch.float64), e()),       # 0-d float64
        (s(), 37.25, e()),                                        # Python float
        (s(), torch.tensor([10, 990]), e()),                      # 1-d int64
        (s(), torch.tensor(1.0e-3), e()),
        (s(), torch.tensor(0, dtype=torch.int32), e()),
    ]
