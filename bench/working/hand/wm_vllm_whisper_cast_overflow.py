"""Hand rewrite of cases/wm_vllm_whisper_cast_overflow.py: `cast_overflow_tensors` selects the
clamped tensor with `torch.where` on the 0-d overflow flag instead of branching on it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "any-branch"
GRAD = True


def cast_overflow_tensors(
    tensors: torch.Tensor,
    offset: float = 1000,
) -> torch.Tensor:
    overflow = tensors.isinf().any() | tensors.isnan().any()
    clamp_value = torch.finfo(tensors.dtype).max - offset
    return torch.where(overflow, torch.clamp(tensors, min=-clamp_value, max=clamp_value), tensors)


class WhisperAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim**-0.5
        self.qkv_proj = nn.Linear(embed_dim, 3 * embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, hidden_states):
        B, T, E = hidden_states.shape
        qkv = self.qkv_proj(hidden_states)
        q, k, v = qkv.chunk(chunks=3, dim=-1)
        q, k, v = (t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        attn_output = F.scaled_dot_product_attention(q, k, v, scale=self.scaling)
        attn_output = attn_output.transpose(1, 2).reshape(B, T, E)
        return self.out_proj(attn_output)


class WhisperMLP(nn.Module):
    def __init__(self, embed_dim, ffn_dim):
        super().__init__()
        self.activation_fn = nn.GELU()
        self.fc1 = nn.Linear(embed_dim, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, embed_dim)

    def forward(self, hidden_states):
        hidden_states = self.fc1(hidden_states)
        hidden_states = self.activation_fn(hidden_states)
        hidden_states = self.fc2(hidden_states)
        return hidden_states


class WhisperEncoderLayer(nn.Module):
    def __init__(self, d_model=8, encoder_attention_heads=2, encoder_ffn_dim=16):
        super().__init__()
        self.embed_dim = d_model
        self.self_attn = WhisperAttention(self.embed_dim, encoder_attention_heads)
        self.self_attn_layer_norm = nn.LayerNorm(self.embed_dim)
        self.mlp = WhisperMLP(self.embed_dim, encoder_ffn_dim)
        self.final_layer_norm = nn.LayerNorm(self.embed_dim)

    def forward(
        self,
        hidden_states: torch.Tensor,
    ):
        residual = hidden_states
        hidden_states = self.self_attn_layer_norm(hidden_states)
        hidden_states = self.self_attn(hidden_states=hidden_states)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.final_layer_norm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + hidden_states

        hidden_states = cast_overflow_tensors(hidden_states)

        return hidden_states


def make():
    torch.manual_seed(0)
    layer = WhisperEncoderLayer()
    with torch.no_grad():
        # large output projections, as in the overflowing fp16 checkpoints
        layer.mlp.fc2.weight.mul_(400.0)
    return layer.half()


def inputs():
    g = torch.Generator().manual_seed(11)
    h = lambda B, T, scale=1.0: (torch.randn(B, T, 8, generator=g) * scale).half()
    over_pos = torch.randn(1, 4, 8, generator=torch.Generator().manual_seed(11)).half()
    over_pos[0, 1, 2] = 65480.0  # + the block's output there rounds past the fp16 maximum: inf
    over_neg = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(12)).half()
    over_neg[1, 2, 0] = -65480.0  # -inf
    near_max = h(2, 3)
    near_max[1, 2] = -65000.0  # large but finite
    with_nan = h(1, 3)
    with_nan[0, 0, 0] = float("nan")
    with_inf = h(2, 3)
    with_inf[0, 1, 4] = float("inf")
    return [
        (h(2, 4),),
        (over_pos,),
        (h(1, 5, 1000.0),),
        (near_max,),
        (over_neg,),
        (with_nan,),
        (h(2, 3, 100.0),),
        (with_inf,),
        (h(3, 2, 10.0),),
    ]
