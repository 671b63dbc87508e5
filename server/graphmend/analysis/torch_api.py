"""Facts about torch's API, for an analyser that must not import torch.

The analyser runs on every keystroke and in environments without torch, so what it needs to know
about torch's API is generated once per torch release into torch_api.json
(`.venv/bin/python tools/gen_torch_api.py`; see that script for what each set holds).
"""

from __future__ import annotations

import json
from pathlib import Path

_FACTS = json.loads(Path(__file__).with_name("torch_api.json").read_text(encoding="utf-8"))

TORCH_VERSION: str = _FACTS["torch_version"]
TENSOR_METHODS: frozenset[str] = frozenset(_FACTS["tensor_methods"])
TENSOR_ATTRIBUTES: frozenset[str] = frozenset(_FACTS["tensor_attributes"])
# Tensor methods no builtin type, nn.Module or Logger has: calling one is evidence of a tensor.
EVIDENCE_METHODS: frozenset[str] = frozenset(_FACTS["evidence_methods"])
# Tensor methods written in Python (`norm`, `split`): dynamo traces into them as into user code.
PYTHON_TENSOR_METHODS: frozenset[str] = frozenset(_FACTS["python_tensor_methods"])
NN_MODULE_CLASSES: frozenset[str] = frozenset(_FACTS["nn_module_classes"])
TORCH_FUNCTIONS: frozenset[str] = frozenset(_FACTS["torch_functions"])
FUNCTIONAL: frozenset[str] = frozenset(_FACTS["functional"])
# torch.nn and torch.distributions classes (public and defining-module names) -> the attributes
# they hold as a descriptor computing a value, and which: "property" or "lazy_property" (GM532).
CLASS_PROPERTIES: dict[str, dict[str, str]] = _FACTS["class_properties"]
