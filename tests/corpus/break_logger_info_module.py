"""`logger.info` with a module-level logger inside forward splits the graph (GM306)."""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        logger.info("encoder output shape %s", tuple(h.shape))  # expect: GM306
        return h.relu()


def sample():
    return Encoder(), (torch.randn(2, 4),), {}
