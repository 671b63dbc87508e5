"""MONAI's foreground bounding box (used by CropForeground): per spatial dim, reduce the foreground
mask over the other dims, find the first/last foreground index, add the margin, clip to the image,
and return the start/end as Python ints.

Source: https://github.com/Project-MONAI/MONAI/blob/dev/monai/transforms/utils.py
        (generate_spatial_bounding_box, is_positive) and
        https://github.com/Project-MONAI/MONAI/blob/dev/monai/transforms/utils_pytorch_numpy_unification.py
        (any_np_pt, where); monai.utils.ensure_tuple / ensure_tuple_rep written inline.
Reduced: the lazy-resampling check (`check_non_lazy_pending_ops`) and the
`deprecated_arg_default` decorator are left out; torch tensors only.

Breaks: `if not dt.any():` (branch on a tensor value), `arg_max = where(dt == dt.max())[0]`
(`torch.where(condition)`: nonzero, data-dependent shape), `max(min_d, 0)` / `min(max_d, ...)`
(Python comparisons of 0-d tensors) and `min_d.detach().cpu().item()` (Tensor.item()).

HAND: none — the function returns Python lists of ints computed from the image's values (they are
used as crop slice bounds, i.e. output shapes, by CropForeground).
"""
import itertools
from typing import Callable, List, Sequence, Tuple, Union

import torch


def is_positive(img):
    """
    Returns a boolean version of `img` where the positive values are converted into True, the other values are False.
    """
    return img > 0


def ensure_tuple(vals):
    if isinstance(vals, (list, tuple)):
        return tuple(vals)
    return (vals,)


def ensure_tuple_rep(tup, dim: int):
    if isinstance(tup, torch.Tensor):
        tup = tup.detach().cpu().numpy()
    if not isinstance(tup, (list, tuple)):
        return (tup,) * dim
    if len(tup) == dim:
        return tuple(tup)
    raise ValueError(f"Sequence must have length {dim}, got {len(tup)}.")


def any_np_pt(x, axis: Union[int, Sequence[int]]):
    # pytorch can't handle multiple dimensions to `any` so loop across them
    axis = [axis] if not isinstance(axis, Sequence) else axis
    for ax in axis:
        try:
            x = torch.any(x, ax)
        except RuntimeError:
            # older versions of pytorch require the input to be cast to boolean
            x = torch.any(x.bool(), ax)
    return x


def where(condition, x=None, y=None):
    """
    Note that `torch.where` may convert y.dtype to x.dtype.
    """
    if x is not None:
        x = torch.as_tensor(x, device=condition.device)
        y = torch.as_tensor(y, device=condition.device, dtype=x.dtype)
        result = torch.where(condition, x, y)
    else:
        result = torch.where(condition)  # type: ignore
    return result


def generate_spatial_bounding_box(
    img: torch.Tensor,
    select_fn: Callable = is_positive,
    channel_indices=None,
    margin: Union[Sequence[int], int] = 0,
    allow_smaller: bool = True,
) -> Tuple[List[int], List[int]]:
    """
    Generate the spatial bounding box of foreground in the image with start-end positions (inclusive).
    """
    spatial_size = img.shape[1:]
    data = img[list(ensure_tuple(channel_indices))] if channel_indices is not None else img
    data = select_fn(data).any(0)
    ndim = len(data.shape)
    margin = ensure_tuple_rep(margin, ndim)
    for m in margin:
        if m < 0:
            raise ValueError(f"margin value should not be negative number, got {margin}.")

    box_start = [0] * ndim
    box_end = [0] * ndim

    for di, ax in enumerate(itertools.combinations(reversed(range(ndim)), ndim - 1)):
        dt = data
        if len(ax) != 0:
            dt = any_np_pt(dt, ax)

        if not dt.any():
            # if no foreground, return all zero bounding box coords
            return [0] * ndim, [0] * ndim

        arg_max = where(dt == dt.max())[0]
        min_d = arg_max[0] - margin[di]
        max_d = arg_max[-1] + margin[di] + 1
        if allow_smaller:
            min_d = max(min_d, 0)
            max_d = min(max_d, spatial_size[di])

        box_start[di] = min_d.detach().cpu().item() if isinstance(min_d, torch.Tensor) else min_d
        box_end[di] = max_d.detach().cpu().item() if isinstance(max_d, torch.Tensor) else max_d

    return box_start, box_end


def foreground_box(img, channel_indices=None, margin=0, allow_smaller=True, threshold=None):
    """The call CropForeground makes, with `select_fn` built from an optional threshold (so the
    harness's arguments hold no function objects)."""
    select_fn = is_positive if threshold is None else (lambda x: x > threshold)
    return generate_spatial_bounding_box(img, select_fn, channel_indices, margin, allow_smaller)


def make():
    return foreground_box


def inputs():
    g = torch.Generator().manual_seed(0)

    def blob(c, *spatial, at):
        img = torch.zeros(c, *spatial)
        img[(slice(None),) + tuple(slice(a, b) for a, b in at)] = torch.rand(
            c, *[b - a for a, b in at], generator=g) + 0.1
        return img

    return [
        (blob(1, 8, 8, at=[(2, 5), (3, 7)]),),
        (blob(2, 10, 6, at=[(0, 4), (1, 6)]), None, 1),             # margin, clipped at 0
        (blob(1, 6, 7, 5, at=[(1, 3), (2, 6), (0, 5)]),),                        # 3-D
        (torch.zeros(1, 5, 5),),                                                  # no foreground
        (blob(3, 8, 8, at=[(4, 8), (4, 8)]), [0, 2], (2, 3)),      # channels, per-dim margin
        (blob(1, 9, 9, at=[(3, 6), (3, 6)]), None, 5, False),      # box beyond the image
        (blob(1, 8, 8, at=[(2, 5), (3, 7)]) - 0.5, None, 0, True, 0.1),      # custom select_fn
        (blob(1, 12, 4, at=[(11, 12), (0, 1)]),),                                 # one voxel, at a corner
        (blob(2, 6, 6, 6, at=[(0, 6), (2, 3), (5, 6)]), None, 1),
    ]


def failing_inputs():
    return [(torch.ones(1, 4, 4), None, -1)]


KIND = "branch+dynamic-shape+item"
