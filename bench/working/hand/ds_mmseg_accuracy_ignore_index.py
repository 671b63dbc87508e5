"""Hand rewrite of ds_mmseg_accuracy_ignore_index: masked counts instead of boolean-mask gathers."""

import torch

KIND = "mask-metric"


def accuracy(pred, target, topk=1, thresh=None, ignore_index=None):
    """Calculate accuracy according to the prediction and target.

    Args:
        pred (torch.Tensor): The model prediction, shape (N, num_class, ...)
        target (torch.Tensor): The target of each prediction, shape (N, , ...)
        ignore_index (int | None): The label index to be ignored. Default: None
        topk (int | tuple[int], optional): If the predictions in ``topk``
            matches the target, the predictions will be regarded as
            correct ones. Defaults to 1.
        thresh (float, optional): If not None, predictions with scores under
            this threshold are considered incorrect. Default to None.

    Returns:
        float | tuple[float]: If the input ``topk`` is a single integer,
            the function will return a single float as accuracy. If
            ``topk`` is a tuple containing multiple integers, the
            function will return a tuple containing accuracies of
            each ``topk`` number.
    """
    assert isinstance(topk, (int, tuple))
    if isinstance(topk, int):
        topk = (topk, )
        return_single = True
    else:
        return_single = False

    maxk = max(topk)
    if pred.size(0) == 0:
        accu = [pred.new_tensor(0.) for i in range(len(topk))]
        return accu[0] if return_single else accu
    assert pred.ndim == target.ndim + 1
    assert pred.size(0) == target.size(0)
    assert maxk <= pred.size(1), \
        f'maxk {maxk} exceeds pred dimension {pred.size(1)}'
    pred_value, pred_label = pred.topk(maxk, dim=1)
    # transpose to shape (maxk, N, ...)
    pred_label = pred_label.transpose(0, 1)
    correct = pred_label.eq(target.unsqueeze(0).expand_as(pred_label))
    if thresh is not None:
        # Only prediction values larger than thresh are counted as correct
        correct = correct & (pred_value > thresh).t()
    if ignore_index is not None:
        valid = target != ignore_index
        correct = correct & valid.unsqueeze(0)
    res = []
    eps = torch.finfo(torch.float32).eps
    for k in topk:
        # Avoid causing ZeroDivisionError when all pixels
        # of an image are ignored
        correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True) + eps
        if ignore_index is not None:
            total_num = valid.sum().double() + eps
        else:
            total_num = target.numel() + eps
        res.append(correct_k.mul_(100.0 / total_num))
    return res[0] if return_single else res


def make():
    return accuracy


def inputs():
    g = torch.Generator().manual_seed(9)

    def seg(n, c, h, w, ignored=0.0):
        pred = torch.randn(n, c, h, w, generator=g)
        target = torch.randint(0, c, (n, h, w), generator=g)
        target[torch.rand(n, h, w, generator=g) < ignored] = 255
        return pred, target

    out = []
    p, t = seg(2, 4, 3, 3, 0.3)
    out.append((p, t, 1, None, 255))
    p, t = seg(1, 5, 4, 4, 0.5)
    out.append((p, t, (1, 2), None, 255))
    p, t = seg(2, 3, 2, 5, 1.0)                  # every pixel ignored
    out.append((p, t, 1, None, 255))
    p, t = seg(3, 4, 2, 2, 0.0)
    out.append((p, t, 1, None, 255))             # nothing ignored
    p, t = seg(2, 4, 3, 3, 0.2)
    out.append((p, t, (1, 3), None, None))       # no ignore_index
    pred = torch.randn(6, 5, generator=g)
    target = torch.tensor([0, 4, 255, 2, 255, 1])
    out.append((pred, target, 2, None, 255))     # (N, C) classification
    out.append((pred, target, 1, 0.5, 255))      # with a score threshold
    p, t = seg(1, 4, 5, 5, 0.4)
    out.append((p, t, (1, 2, 4), None, 255))
    out.append((torch.zeros(0, 4, 2, 2), torch.zeros(0, 2, 2, dtype=torch.long), 1, None, 255))  # empty batch
    return out
