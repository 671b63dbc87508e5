"""Hand rewrite of cases/wj_moco_dequeue_enqueue_ptr.py: in `_dequeue_and_enqueue` the queue
pointer stays a tensor. The keys are written with `index_copy_` at columns
`queue_ptr + arange(batch_size)` (the kept `assert self.K % batch_size == 0`, with a pointer that only
ever advances by the batch size, keeps those columns inside the queue, as the slice was) and the
buffer is advanced in place with `(queue_ptr[0] + batch_size) % K`. Same queue, pointer, loss and
gradients; no `int()` of the buffer.
"""
import torch
import torch.nn as nn

KIND = "int-buffer"
GRAD = True


class ModelBase(nn.Module):
    """The demo's CIFAR ResNet recipe, reduced to one conv block."""

    def __init__(self, feature_dim=128):
        super(ModelBase, self).__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)),
            nn.Flatten(1),
            nn.Linear(8, feature_dim),
        )

    def forward(self, x):
        x = self.net(x)
        # note: not normalized here
        return x


class ModelMoCo(nn.Module):
    def __init__(self, dim=128, K=4096, m=0.99, T=0.1, symmetric=True):
        super(ModelMoCo, self).__init__()

        self.K = K
        self.m = m
        self.T = T
        self.symmetric = symmetric

        # create the encoders
        self.encoder_q = ModelBase(feature_dim=dim)
        self.encoder_k = ModelBase(feature_dim=dim)

        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)  # initialize
            param_k.requires_grad = False  # not update by gradient

        # create the queue
        self.register_buffer("queue", torch.randn(dim, K))
        self.queue = nn.functional.normalize(self.queue, dim=0)

        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        """
        Momentum update of the key encoder
        """
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1. - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        batch_size = keys.shape[0]

        ptr = self.queue_ptr  # (1,) long tensor, read on the device
        assert self.K % batch_size == 0  # for simplicity

        # replace the keys at ptr (dequeue and enqueue)
        cols = ptr + torch.arange(batch_size, device=ptr.device)
        self.queue.index_copy_(1, cols, keys.t())  # transpose
        new_ptr = (ptr[0] + batch_size) % self.K  # move pointer

        self.queue_ptr[0] = new_ptr

    @torch.no_grad()
    def _batch_shuffle_single_gpu(self, x):
        """
        Batch shuffle, for making use of BatchNorm.
        """
        # random shuffle index
        idx_shuffle = torch.randperm(x.shape[0])

        # index for restoring
        idx_unshuffle = torch.argsort(idx_shuffle)

        return x[idx_shuffle], idx_unshuffle

    @torch.no_grad()
    def _batch_unshuffle_single_gpu(self, x, idx_unshuffle):
        """
        Undo batch shuffle.
        """
        return x[idx_unshuffle]

    def contrastive_loss(self, im_q, im_k):
        # compute query features
        q = self.encoder_q(im_q)  # queries: NxC
        q = nn.functional.normalize(q, dim=1)  # already normalized

        # compute key features
        with torch.no_grad():  # no gradient to keys
            # shuffle for making use of BN
            im_k_, idx_unshuffle = self._batch_shuffle_single_gpu(im_k)

            k = self.encoder_k(im_k_)  # keys: NxC
            k = nn.functional.normalize(k, dim=1)  # already normalized

            # undo shuffle
            k = self._batch_unshuffle_single_gpu(k, idx_unshuffle)

        # compute logits
        # Einstein sum is more intuitive
        # positive logits: Nx1
        l_pos = torch.einsum('nc,nc->n', [q, k]).unsqueeze(-1)
        # negative logits: NxK
        l_neg = torch.einsum('nc,ck->nk', [q, self.queue.clone().detach()])

        # logits: Nx(1+K)
        logits = torch.cat([l_pos, l_neg], dim=1)

        # apply temperature
        logits /= self.T

        # labels: positive key indicators
        labels = torch.zeros(logits.shape[0], dtype=torch.long)

        loss = nn.CrossEntropyLoss()(logits, labels)

        return loss, q, k

    def forward(self, im1, im2):
        """
        Input:
            im_q: a batch of query images
            im_k: a batch of key images
        Output:
            loss
        """

        # update the key encoder
        with torch.no_grad():  # no gradient to keys
            self._momentum_update_key_encoder()

        # compute loss
        if self.symmetric:  # asymmetric loss
            loss_12, q1, k2 = self.contrastive_loss(im1, im2)
            loss_21, q2, k1 = self.contrastive_loss(im2, im1)
            loss = loss_12 + loss_21
            k = torch.cat([k1, k2], dim=0)
        else:  # asymmetric loss
            loss, q, k = self.contrastive_loss(im1, im2)

        self._dequeue_and_enqueue(k)

        return loss


def make():
    torch.manual_seed(0)
    return ModelMoCo(dim=8, K=16, m=0.99, T=0.1, symmetric=True).train()


def inputs():
    g = torch.Generator().manual_seed(5)

    def crops(b):
        img = torch.randn(b, 3, 6, 6, generator=g)
        # two "augmented views" of the same images
        return (img + 0.1 * torch.randn(b, 3, 6, 6, generator=g),
                img.flip(-1) + 0.1 * torch.randn(b, 3, 6, 6, generator=g))

    # batch b enqueues 2*b keys; the pointer walks 0 -> 4 -> 8 -> 0 -> 8 -> 12 -> 0 -> 8 -> 0 -> 4,
    # wrapping around the queue of 16 several times
    return [crops(2), crops(2), crops(4), crops(4), crops(2), crops(2), crops(4), crops(4), crops(2)]


def failing_inputs():
    g = torch.Generator().manual_seed(6)
    # 2 x 3 = 6 keys: K=16 is not a multiple of the batch, the assert fires
    return [(torch.randn(3, 3, 6, 6, generator=g), torch.randn(3, 3, 6, 6, generator=g))]
