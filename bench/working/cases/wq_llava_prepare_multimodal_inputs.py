"""LLaVA `prepare_inputs_labels_for_multimodal`: the padding is removed with the attention mask,
every `<image>` placeholder token (IMAGE_TOKEN_INDEX = -200) is replaced by the projected
patch features of its image, labels get IGNORE_INDEX over the image span, and the sequences are
re-padded (right padding) with new attention masks and position ids.

Source: https://github.com/haotian-liu/LLaVA/blob/main/llava/model/llava_arch.py
(`LlavaMetaForCausalLM.prepare_inputs_labels_for_multimodal`, single-tensor `images` path, and
`encode_images`); the CLIP vision tower and the LLaMA embedding are reduced to tiny linear layers.

Breaks: `cur_input_ids[cur_attention_mask]` and `cur_labels[cur_attention_mask]` (boolean-mask
gathers, dynamic shape); `if num_images == 0:` (data-dependent branch on a 0-d tensor; dynamo skips
the resumed frame); `for i in range(num_images + 1)` (a tensor used as a Python int, frame skipped).
`torch.where(cur_input_ids == IMAGE_TOKEN_INDEX)[0].tolist()` lies in the skipped frames.

HAND: none — the length of every multimodal sequence, hence the padded output shape, depends on
the attention mask and on how many image tokens each prompt holds (data-dependent output shape).
"""
import types

import torch
from torch import nn

KIND = "dynamic-shape+tolist"

IGNORE_INDEX = -100
IMAGE_TOKEN_INDEX = -200


class TinyVisionTower(nn.Module):
    def __init__(self, patch_dim=4, hidden=6, num_patches=3):
        super().__init__()
        self.num_patches = num_patches
        self.patch_embed = nn.Linear(patch_dim, hidden)

    def forward(self, images):
        # images: [n_img, C, H, W] -> [n_img, num_patches, hidden]
        b = images.shape[0]
        patches = images.reshape(b, self.num_patches, -1)
        return self.patch_embed(patches)


class TinyLlavaModel(nn.Module):
    def __init__(self, vocab=20, hidden=5):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.vision_tower = TinyVisionTower()
        self.mm_projector = nn.Sequential(nn.Linear(6, hidden), nn.GELU(), nn.Linear(hidden, hidden))


class TinyLlavaForCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = TinyLlavaModel()
        self.config = types.SimpleNamespace(mm_patch_merge_type='flat', tokenizer_padding_side='right',
                                            tokenizer_model_max_length=None)

    @property
    def device(self):
        return self.model.embed_tokens.weight.device

    def get_model(self):
        return self.model

    def get_vision_tower(self):
        return self.model.vision_tower

    def encode_images(self, images):
        image_features = self.get_model().vision_tower(images)
        image_features = self.get_model().mm_projector(image_features)
        return image_features

    def prepare_inputs_labels_for_multimodal(
        self, input_ids, position_ids, attention_mask, past_key_values, labels,
        images, image_sizes=None
    ):
        vision_tower = self.get_vision_tower()
        if vision_tower is None or images is None or input_ids.shape[1] == 1:
            return input_ids, position_ids, attention_mask, past_key_values, None, labels

        image_features = self.encode_images(images)

        # TODO: image start / end is not implemented here to support pretraining.
        if getattr(self.config, 'tune_mm_mlp_adapter', False) and getattr(self.config, 'mm_use_im_start_end', False):
            raise NotImplementedError

        _labels = labels
        _position_ids = position_ids
        _attention_mask = attention_mask
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids, dtype=torch.bool)
        else:
            attention_mask = attention_mask.bool()
        if position_ids is None:
            position_ids = torch.arange(0, input_ids.shape[1], dtype=torch.long, device=input_ids.device)
        if labels is None:
            labels = torch.full_like(input_ids, IGNORE_INDEX)

        # remove the padding using attention_mask -- FIXME
        _input_ids = input_ids
        input_ids = [cur_input_ids[cur_attention_mask] for cur_input_ids, cur_attention_mask in zip(input_ids, attention_mask)]
        labels = [cur_labels[cur_attention_mask] for cur_labels, cur_attention_mask in zip(labels, attention_mask)]

        new_input_embeds = []
        new_labels = []
        cur_image_idx = 0
        for batch_idx, cur_input_ids in enumerate(input_ids):
            num_images = (cur_input_ids == IMAGE_TOKEN_INDEX).sum()
            if num_images == 0:
                cur_image_features = image_features[cur_image_idx]
                cur_input_embeds_1 = self.get_model().embed_tokens(cur_input_ids)
                cur_input_embeds = torch.cat([cur_input_embeds_1, cur_image_features[0:0]], dim=0)
                new_input_embeds.append(cur_input_embeds)
                new_labels.append(labels[batch_idx])
                cur_image_idx += 1
                continue

            image_token_indices = [-1] + torch.where(cur_input_ids == IMAGE_TOKEN_INDEX)[0].tolist() + [cur_input_ids.shape[0]]
            cur_input_ids_noim = []
            cur_labels = labels[batch_idx]
            cur_labels_noim = []
            for i in range(len(image_token_indices) - 1):
                cur_input_ids_noim.append(cur_input_ids[image_token_indices[i]+1:image_token_indices[i+1]])
                cur_labels_noim.append(cur_labels[image_token_indices[i]+1:image_token_indices[i+1]])
            split_sizes = [x.shape[0] for x in cur_labels_noim]
            cur_input_embeds = self.get_model().embed_tokens(torch.cat(cur_input_ids_noim))
            cur_input_embeds_no_im = torch.split(cur_input_embeds, split_sizes, dim=0)
            cur_new_input_embeds = []
            cur_new_labels = []

            for i in range(num_images + 1):
                cur_new_input_embeds.append(cur_input_embeds_no_im[i])
                cur_new_labels.append(cur_labels_noim[i])
                if i < num_images:
                    cur_image_features = image_features[cur_image_idx]
                    cur_image_idx += 1
                    cur_new_input_embeds.append(cur_image_features)
                    cur_new_labels.append(torch.full((cur_image_features.shape[0],), IGNORE_INDEX, device=cur_labels.device, dtype=cur_labels.dtype))

            cur_new_input_embeds = [x.to(self.device) for x in cur_new_input_embeds]

            cur_new_input_embeds = torch.cat(cur_new_input_embeds)
            cur_new_labels = torch.cat(cur_new_labels)

            new_input_embeds.append(cur_new_input_embeds)
            new_labels.append(cur_new_labels)

        # Truncate sequences to max length as image embeddings can make the sequence longer
        tokenizer_model_max_length = getattr(self.config, 'tokenizer_model_max_length', None)
        if tokenizer_model_max_length is not None:
            new_input_embeds = [x[:tokenizer_model_max_length] for x in new_input_embeds]
            new_labels = [x[:tokenizer_model_max_length] for x in new_labels]

        # Combine them
        max_len = max(x.shape[0] for x in new_input_embeds)
        batch_size = len(new_input_embeds)

        new_input_embeds_padded = []
        new_labels_padded = torch.full((batch_size, max_len), IGNORE_INDEX, dtype=new_labels[0].dtype, device=new_labels[0].device)
        attention_mask = torch.zeros((batch_size, max_len), dtype=attention_mask.dtype, device=attention_mask.device)
        position_ids = torch.zeros((batch_size, max_len), dtype=position_ids.dtype, device=position_ids.device)

        for i, (cur_new_embed, cur_new_labels) in enumerate(zip(new_input_embeds, new_labels)):
            cur_len = cur_new_embed.shape[0]
            if getattr(self.config, 'tokenizer_padding_side', 'right') == "left":
                new_input_embeds_padded.append(torch.cat((
                    torch.zeros((max_len - cur_len, cur_new_embed.shape[1]), dtype=cur_new_embed.dtype, device=cur_new_embed.device),
                    cur_new_embed
                ), dim=0))
                if cur_len > 0:
                    new_labels_padded[i, -cur_len:] = cur_new_labels
                    attention_mask[i, -cur_len:] = True
                    position_ids[i, -cur_len:] = torch.arange(0, cur_len, dtype=position_ids.dtype, device=position_ids.device)
            else:
                new_input_embeds_padded.append(torch.cat((
                    cur_new_embed,
                    torch.zeros((max_len - cur_len, cur_new_embed.shape[1]), dtype=cur_new_embed.dtype, device=cur_new_embed.device)
                ), dim=0))
                if cur_len > 0:
                    new_labels_padded[i, :cur_len] = cur_new_labels
                    attention_mask[i, :cur_len] = True
                    position_ids[i, :cur_len] = torch.arange(0, cur_len, dtype=position_ids.dtype, device=position_ids.device)

        new_input_embeds = torch.stack(new_input_embeds_padded, dim=0)

        if _labels is None:
            new_labels = None
        else:
            new_labels = new_labels_padded

        if _attention_mask is None:
            attention_mask = None
        else:
            attention_mask = attention_mask.to(dtype=_attention_mask.dtype)

        if _position_ids is None:
            position_ids = None

        return None, position_ids, attention_mask, past_key_values, new_input_embeds, new_labels


def make():
    torch.manual_seed(0)
    return TinyLlavaForCausalLM().prepare_inputs_labels_for_multimodal


def _batch(rows, lengths, with_labels, with_mask):
    L = max(len(r) for r in rows)
    ids = torch.zeros(len(rows), L, dtype=torch.long)
    mask = torch.zeros(len(rows), L, dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r)
        mask[i, :len(r)] = 1
    labels = torch.where(ids == IMAGE_TOKEN_INDEX, IGNORE_INDEX, ids) if with_labels else None
    return ids, (mask if with_mask else None), labels


def inputs():
    g = torch.Generator().manual_seed(2)
    I = IMAGE_TOKEN_INDEX
    out = []
    for rows, n_img, with_labels, with_mask in [
        ([[1, I, 4, 5, 6], [2, I, 7]], 2, True, True),
        ([[3, 4, 5], [1, I, 2, 3]], 2, True, True),          # a text-only prompt still consumes a feature
        ([[I, 1, 2, I, 3]], 2, True, False),                 # two images in one prompt
        ([[5, 6, I], [I, 8, 9, 10, 11]], 2, False, True),
        ([[1, 2, 3, 4]], 1, True, True),                     # no image token at all
        ([[I, 2], [3, I, 4, I], [7, 7, 7]], 4, True, True),
        ([[9, I, 9, 9, 9, 9, 9]], 1, False, False),
        ([[I], [1, 2, I, 3, 4]], 2, True, True),
    ]:
        ids, mask, labels = _batch(rows, None, with_labels, with_mask)
        images = torch.randn(n_img, 3, 2, 2, generator=g)
        out.append((ids, None, mask, None, labels, images))
    # the decoding step (one token) returns the inputs unchanged
    out.append((torch.tensor([[4]]), None, torch.ones(1, 1, dtype=torch.long), None, None, torch.randn(1, 3, 2, 2, generator=g)))
    return out
