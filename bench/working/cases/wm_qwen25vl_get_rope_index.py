"""Qwen2.5-VL's `get_rope_index`: the 3-D (temporal, height, width) M-RoPE position ids of a
multimodal prompt. For each sequence it drops padding with a boolean mask, finds the vision-start
tokens with `torch.argwhere`, counts images and videos, scans the Python token list
(`input_ids.tolist()`, `input_tokens.index(...)`) for each placeholder run, reads the grid sizes
with `.item()` and lays text positions with `torch.arange(text_len)` and vision positions on the
(t, h/merge, w/merge) grid; text-only prompts take the cumsum branch.

Source: https://github.com/pytorch/pytorch/issues/173915 ("Error in `torch.export` /
`torch.compile` while tracing due to data-dependent control flow in `get_rope_index` (Qwen3-VL,
Alpamayo)": "contains data-dependent Python control flow (`.item()` and `if` statements on
tensor-derived values)"), code at
https://github.com/huggingface/transformers/blob/v4.51.0/src/transformers/models/qwen2_5_vl/modeling_qwen2_5_vl.py (as of ~v4.50-v4.53)
(`Qwen2_5_VLForConditionalGeneration.get_rope_index`; the Qwen2-VL / Qwen3-VL versions share the
scan). Reduced: the method is bound to a stub model holding only the config (merge size 2,
tokens_per_second 2, small token ids).

Breaks: `input_ids = input_ids[attention_mask[i] == 1]` (dynamic output shape) at the top of the
batch loop; Dynamo cannot resume inside the loop and skips the frame, so the rest (`argwhere`,
`tolist`, `range(image_nums + video_nums)` on 0-d tensors, `.item()` grid sizes feeding
`torch.arange`, the masked assignment into `position_ids`) runs eagerly.

HAND: none — the number, order and sizes of the position blocks come from Python scans of the token
values (`tolist`, `list.index`) and from grid sizes read with `.item()` that size `torch.arange`;
a tensor-only formulation (e.g. from per-token modality ids) is a redesign of the function, not a
local rewrite.
"""
from typing import Optional, Tuple

import torch

KIND = "tolist-item-scan"


class _VisionConfig:
    spatial_merge_size = 2
    tokens_per_second = 2


class _Config:
    image_token_id = 7
    video_token_id = 8
    vision_start_token_id = 5
    vision_config = _VisionConfig()


class Qwen2_5_VLRopeIndex:
    def __init__(self):
        self.config = _Config()

    def get_rope_index(
        self,
        input_ids: Optional[torch.LongTensor] = None,
        image_grid_thw: Optional[torch.LongTensor] = None,
        video_grid_thw: Optional[torch.LongTensor] = None,
        second_per_grid_ts: Optional[torch.Tensor] = None,
        attention_mask: Optional[torch.Tensor] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        spatial_merge_size = self.config.vision_config.spatial_merge_size
        image_token_id = self.config.image_token_id
        video_token_id = self.config.video_token_id
        vision_start_token_id = self.config.vision_start_token_id
        mrope_position_deltas = []
        if input_ids is not None and (image_grid_thw is not None or video_grid_thw is not None):
            total_input_ids = input_ids
            if attention_mask is None:
                attention_mask = torch.ones_like(total_input_ids)
            position_ids = torch.ones(
                3,
                input_ids.shape[0],
                input_ids.shape[1],
                dtype=input_ids.dtype,
                device=input_ids.device,
            )
            image_index, video_index = 0, 0
            attention_mask = attention_mask.to(total_input_ids.device)
            for i, input_ids in enumerate(total_input_ids):
                input_ids = input_ids[attention_mask[i] == 1]
                image_nums, video_nums = 0, 0
                vision_start_indices = torch.argwhere(input_ids == vision_start_token_id).squeeze(1)
                vision_tokens = input_ids[vision_start_indices + 1]
                image_nums = (vision_tokens == image_token_id).sum()
                video_nums = (vision_tokens == video_token_id).sum()
                input_tokens = input_ids.tolist()
                llm_pos_ids_list: list = []
                st = 0
                remain_images, remain_videos = image_nums, video_nums
                for _ in range(image_nums + video_nums):
                    if image_token_id in input_tokens and remain_images > 0:
                        ed_image = input_tokens.index(image_token_id, st)
                    else:
                        ed_image = len(input_tokens) + 1
                    if video_token_id in input_tokens and remain_videos > 0:
                        ed_video = input_tokens.index(video_token_id, st)
                    else:
                        ed_video = len(input_tokens) + 1
                    if ed_image < ed_video:
                        t, h, w = (
                            image_grid_thw[image_index][0],
                            image_grid_thw[image_index][1],
                            image_grid_thw[image_index][2],
                        )
                        second_per_grid_t = 0
                        image_index += 1
                        remain_images -= 1
                        ed = ed_image

                    else:
                        t, h, w = (
                            video_grid_thw[video_index][0],
                            video_grid_thw[video_index][1],
                            video_grid_thw[video_index][2],
                        )
                        if second_per_grid_ts is not None:
                            second_per_grid_t = second_per_grid_ts[video_index]
                        else:
                            second_per_grid_t = 1.0
                        video_index += 1
                        remain_videos -= 1
                        ed = ed_video
                    llm_grid_t, llm_grid_h, llm_grid_w = (
                        t.item(),
                        h.item() // spatial_merge_size,
                        w.item() // spatial_merge_size,
                    )
                    text_len = ed - st

                    st_idx = llm_pos_ids_list[-1].max() + 1 if len(llm_pos_ids_list) > 0 else 0
                    llm_pos_ids_list.append(torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)

                    if torch.is_tensor(second_per_grid_t):
                        second_per_grid_t = second_per_grid_t.detach().item()
                    range_tensor = torch.arange(llm_grid_t).view(-1, 1)
                    expanded_range = range_tensor.expand(-1, llm_grid_h * llm_grid_w)

                    time_tensor = expanded_range * second_per_grid_t * self.config.vision_config.tokens_per_second

                    time_tensor_long = time_tensor.long()
                    t_index = time_tensor_long.flatten()

                    h_index = torch.arange(llm_grid_h).view(1, -1, 1).expand(llm_grid_t, -1, llm_grid_w).flatten()
                    w_index = torch.arange(llm_grid_w).view(1, 1, -1).expand(llm_grid_t, llm_grid_h, -1).flatten()
                    llm_pos_ids_list.append(torch.stack([t_index, h_index, w_index]) + text_len + st_idx)
                    st = ed + llm_grid_t * llm_grid_h * llm_grid_w

                if st < len(input_tokens):
                    st_idx = llm_pos_ids_list[-1].max() + 1 if len(llm_pos_ids_list) > 0 else 0
                    text_len = len(input_tokens) - st
                    llm_pos_ids_list.append(torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)

                llm_positions = torch.cat(llm_pos_ids_list, dim=1).reshape(3, -1)
                position_ids[..., i, attention_mask[i] == 1] = llm_positions.to(position_ids.device)
                mrope_position_deltas.append(llm_positions.max() + 1 - len(total_input_ids[i]))
            mrope_position_deltas = torch.tensor(mrope_position_deltas, device=input_ids.device).unsqueeze(1)
            return position_ids, mrope_position_deltas
        else:
            if attention_mask is not None:
                position_ids = attention_mask.long().cumsum(-1) - 1
                position_ids.masked_fill_(attention_mask == 0, 1)
                position_ids = position_ids.unsqueeze(0).expand(3, -1, -1).to(attention_mask.device)
                max_position_ids = position_ids.max(0, keepdim=False)[0].max(-1, keepdim=True)[0]
                mrope_position_deltas = max_position_ids + 1 - attention_mask.shape[-1]
            else:
                position_ids = (
                    torch.arange(input_ids.shape[1], device=input_ids.device)
                    .view(1, 1, -1)
                    .expand(3, input_ids.shape[0], -1)
                )
                mrope_position_deltas = torch.zeros(
                    [input_ids.shape[0], 1],
                    device=input_ids.device,
                    dtype=input_ids.dtype,
                )

            return position_ids, mrope_position_deltas


def make():
    torch.manual_seed(0)
    return Qwen2_5_VLRopeIndex().get_rope_index


VS, IMG, VID = 5, 7, 8


def inputs():
    img_2x4 = [VS] + [IMG] * 2  # t=1, h=2, w=4 -> 1*1*2 = 2 tokens after merging
    img_4x4 = [VS] + [IMG] * 4  # t=1, h=4, w=4 -> 4 tokens
    vid_2x2x4 = [VS] + [VID] * 4  # t=2, h=2, w=4 -> 2*1*2 = 4 tokens
    L = torch.tensor
    return [
        (L([[1, 2, 3, 4]]),),  # text only, no mask
        (L([[1, 2] + img_2x4 + [3, 4]]), L([[1, 2, 4]])),
        (L([[0, 0, 2, 3], [1, 2, 3, 4]]), None, None, None, L([[0, 0, 1, 1], [1, 1, 1, 1]])),  # text, mask
        (L([[1] + img_4x4 + [2] + img_2x4 + [3]]), L([[1, 4, 4], [1, 2, 4]])),  # two images
        (L([[2] + vid_2x2x4 + [3, 4]]), None, L([[2, 2, 4]]), L([0.5])),  # a video
        (  # batch of 2, left padded, image + video
            L([[0, 0, 1] + img_2x4 + [2] + vid_2x2x4, [1, 2] + img_4x4 + [3, 4, 6, 6, 6]]),
            L([[1, 2, 4], [1, 4, 4]]),
            L([[2, 2, 4]]),
            L([1.0]),
            L([[0, 0] + [1] * 10, [1] * 12]),
        ),
        (L([[1] + img_2x4]), L([[1, 2, 4]])),  # image at the end
        (L([[1, 2, 3]]), None, None, None, L([[1, 1, 1]])),
    ]
