"""GraphMend: find and fix TorchDynamo graph breaks in PyTorch 2 code."""

from .analysis import analyze
from .config import Config
from .findings import Edit, Finding, Severity, Span

__version__ = "0.1.0"
__all__ = ["Config", "Edit", "Finding", "Severity", "Span", "__version__", "analyze"]
