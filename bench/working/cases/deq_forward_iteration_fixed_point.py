"""Deep Equilibrium (DEQ) layer from the NeurIPS 2020 implicit-layers tutorial: fixed-point solve with
``forward_iteration`` (relative residuals read with ``.item()``, stop when below ``tol``) and the
implicit backward through a ``register_hook`` that runs the same solver on the VJP.

``forward_iteration``, ``ResNetLayer`` and ``DEQFixedPoint`` kept as in the tutorial (small channel
counts), followed by a pooled linear classifier as in its CIFAR10 model.

Source: https://implicit-layers-tutorial.org/deep_equilibrium_models/ (Chapter 4: forward_iteration,
        ResNetLayer, DEQFixedPoint)

Breaks: ``(f0 - x).norm().item()`` / ``f0.norm().item()`` in the solver loop (and the
``if (res[-1] < tol): break`` on them); the loop is inside the ``torch.no_grad()`` solve of
``DEQFixedPoint.forward``.

HAND: none — the number of solver iterations depends on the residuals, and the layer keeps the
residual history as a Python list of floats (``self.forward_res``, which the tutorial plots); the
backward hook's solve runs at backward time anyway.
"""
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.nn.functional as F


class ResNetLayer(nn.Module):
    def __init__(self, n_channels, n_inner_channels, kernel_size=3, num_groups=2):
        super().__init__()
        self.conv1 = nn.Conv2d(n_channels, n_inner_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.conv2 = nn.Conv2d(n_inner_channels, n_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.norm1 = nn.GroupNorm(num_groups, n_inner_channels)
        self.norm2 = nn.GroupNorm(num_groups, n_channels)
        self.norm3 = nn.GroupNorm(num_groups, n_channels)
        self.conv1.weight.data.normal_(0, 0.01)
        self.conv2.weight.data.normal_(0, 0.01)

    def forward(self, z, x):
        y = self.norm1(F.relu(self.conv1(z)))
        return self.norm3(F.relu(z + self.norm2(x + self.conv2(y))))


def forward_iteration(f, x0, max_iter=50, tol=1e-2):
    f0 = f(x0)
    res = []
    for k in range(max_iter):
        x = f0
        f0 = f(x)
        res.append((f0 - x).norm().item() / (1e-5 + f0.norm().item()))
        if (res[-1] < tol):
            break
    return f0, res


class DEQFixedPoint(nn.Module):
    def __init__(self, f, solver, **kwargs):
        super().__init__()
        self.f = f
        self.solver = solver
        self.kwargs = kwargs

    def forward(self, x):
        # compute forward pass and re-engage autograd tape
        with torch.no_grad():
            z, self.forward_res = self.solver(lambda z: self.f(z, x), torch.zeros_like(x), **self.kwargs)
        z = self.f(z, x)

        # set up Jacobian vector product (without additional forward calls)
        z0 = z.clone().detach().requires_grad_()
        f0 = self.f(z0, x)

        def backward_hook(grad):
            g, self.backward_res = self.solver(lambda y: autograd.grad(f0, z0, y, retain_graph=True)[0] + grad,
                                               grad, **self.kwargs)
            return g

        z.register_hook(backward_hook)
        return z


class DEQClassifier(nn.Module):
    def __init__(self, chan=4, n_classes=3):
        super().__init__()
        self.stem = nn.Conv2d(3, chan, kernel_size=3, bias=True, padding=1)
        self.norm = nn.BatchNorm2d(chan)
        f = ResNetLayer(chan, 8, kernel_size=3)
        self.deq = DEQFixedPoint(f, forward_iteration, tol=1e-2, max_iter=25)
        self.head = nn.Linear(chan, n_classes)

    def forward(self, x):
        z = self.deq(self.norm(self.stem(x)))
        return self.head(F.adaptive_avg_pool2d(z, 1).flatten(1))


def make():
    torch.manual_seed(0)
    return DEQClassifier().eval()


def inputs():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(b, 3, h, w, generator=g) * s,) for b, h, w, s in
            [(2, 6, 6, 1.0), (1, 8, 8, 3.0), (3, 4, 4, 0.5), (1, 5, 7, 1.0),
             (2, 8, 8, 10.0), (1, 3, 3, 1.0), (4, 6, 6, 2.0), (1, 6, 6, 0.1)]]


KIND = "item-loop-solver"
GRAD = True
