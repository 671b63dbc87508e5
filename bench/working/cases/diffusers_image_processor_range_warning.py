"""diffusers VaeImageProcessor.preprocess: FutureWarning and skipped normalisation when a tensor image
already has negative values, before an img2img VAE encode.

The tensor branch of ``VaeImageProcessor.preprocess`` is kept as in the source (cat/stack of the
list, latent pass-through, ``get_default_height_width`` rounding to the VAE scale factor, resize,
then ``if do_normalize and image.min() < 0: warnings.warn(...)``); the pipeline step then encodes
with a reduced VAE encoder (one conv) and scales the latents, as ``prepare_latents`` does.

Source: https://github.com/huggingface/diffusers/blob/main/src/diffusers/image_processor.py (VaeImageProcessor.preprocess)
        https://github.com/huggingface/diffusers/blob/main/src/diffusers/pipelines/stable_diffusion/pipeline_stable_diffusion_img2img.py

Breaks: ``if do_normalize and image.min() < 0`` (data-dependent branch) and the ``warnings.warn``
call whose f-string formats ``image.min()`` / ``image.max()``.

HAND: the normalisation is selected with ``torch.where(image.min() < 0, image, 2 * image - 1)``, and
the warning moves into a ``torch.library.custom_op`` with an ORDERED effect that receives the image
and issues the same FutureWarning text (with the same min/max formatting) at run time when
``image.min() < 0``.
"""
import warnings
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class VaeImageProcessor:
    def __init__(self, vae_scale_factor=8, vae_latent_channels=4, do_resize=True, do_normalize=True,
                 do_binarize=False, do_convert_grayscale=False):
        self.config = SimpleNamespace(
            vae_scale_factor=vae_scale_factor, vae_latent_channels=vae_latent_channels, do_resize=do_resize,
            do_normalize=do_normalize, do_binarize=do_binarize, do_convert_grayscale=do_convert_grayscale,
        )

    @staticmethod
    def normalize(images):
        return 2.0 * images - 1.0

    @staticmethod
    def binarize(image):
        image[image < 0.5] = 0
        image[image >= 0.5] = 1
        return image

    def get_default_height_width(self, image, height=None, width=None):
        if height is None:
            height = image.shape[2]
        if width is None:
            width = image.shape[3]
        width, height = (x - x % self.config.vae_scale_factor for x in (width, height))
        return height, width

    def resize(self, image, height, width):
        return F.interpolate(image, size=(height, width))

    def preprocess(self, image, height=None, width=None):
        if isinstance(image, torch.Tensor):
            image = [image]

        if isinstance(image[0], torch.Tensor):
            image = torch.cat(image, axis=0) if image[0].ndim == 4 else torch.stack(image, axis=0)

            if self.config.do_convert_grayscale and image.ndim == 3:
                image = image.unsqueeze(1)

            channel = image.shape[1]
            # don't need any preprocess if the image is latents
            if channel == self.config.vae_latent_channels:
                return image

            height, width = self.get_default_height_width(image, height, width)
            if self.config.do_resize:
                image = self.resize(image, height, width)

        # expected range [0,1], normalize to [-1,1]
        do_normalize = self.config.do_normalize
        if do_normalize and image.min() < 0:
            warnings.warn(
                "Passing `image` as torch tensor with value range in [-1,1] is deprecated. The expected value range for image tensor is [0,1] "
                f"when passing as pytorch tensor or numpy Array. You passed `image` with value range [{image.min()},{image.max()}]",
                FutureWarning,
            )
            do_normalize = False
        if do_normalize:
            image = self.normalize(image)

        if self.config.do_binarize:
            image = self.binarize(image)

        return image


class Img2ImgEncode(nn.Module):
    def __init__(self):
        super().__init__()
        self.image_processor = VaeImageProcessor(vae_scale_factor=4)
        self.vae_encoder = nn.Conv2d(3, 4, kernel_size=4, stride=4)
        self.scaling_factor = 0.18215

    def forward(self, image):
        image = self.image_processor.preprocess(image)
        if image.shape[1] == 4:
            init_latents = image
        else:
            init_latents = self.vae_encoder(image) * self.scaling_factor
        return init_latents


def make():
    torch.manual_seed(0)
    return Img2ImgEncode()


def inputs():
    g = torch.Generator().manual_seed(0)
    return [
        (torch.rand(1, 3, 8, 8, generator=g),),
        (torch.rand(2, 3, 8, 8, generator=g) * 2 - 1,),      # already in [-1, 1]: warning
        (torch.rand(1, 3, 10, 9, generator=g),),             # rounded down to the scale factor
        (torch.rand(3, 8, 12, generator=g),),                # a single 3-d image: stacked
        (torch.rand(2, 3, 8, 8, generator=g) - 0.01,),
        (torch.zeros(1, 3, 4, 4),),
        (torch.randn(1, 3, 8, 4, generator=g),),
        (torch.rand(1, 4, 3, 3, generator=g) - 0.5,),        # latents: returned as they are
        (torch.rand(2, 3, 4, 8, generator=g),),
    ]


KIND = "branch-warning"
GRAD = True
