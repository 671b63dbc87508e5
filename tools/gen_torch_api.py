"""Regenerate server/graphmend/analysis/torch_api.json (read by torch_api.py) from the installed torch.

The analyser must not import torch (it runs on every keystroke and in environments without
torch), so the facts it needs about torch's API are written out here once per torch release:

    .venv/bin/python tools/gen_torch_api.py

TENSOR_METHODS are the public methods of torch.Tensor. EVIDENCE_METHODS are the ones no builtin
type, nn.Module or logging.Logger also has: calling one on a value of unknown type is taken as
evidence that it is a tensor (a numpy array behaves the same under dynamo, which traces numpy as
tensors). PYTHON_TENSOR_METHODS are the public methods torch.Tensor defines in Python (`norm`,
`split`, `unique`): dynamo traces their source, unlike the C methods. NN_MODULE_CLASSES are the nn.Module subclasses exported by torch.nn.
CLASS_PROPERTIES are, for each class torch.nn and torch.distributions export (by its public and its
defining module's name), the attributes it holds as a `property` or torch's `lazy_property`, with
which: read through `super()` in compiled code, dynamo gets the descriptor, not the value (GM532).
"""
from __future__ import annotations

import inspect
import json
import logging
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[1] / "server" / "graphmend" / "analysis" / "torch_api.json"


def main() -> None:
    shared: set[str] = set()
    for t in (list, dict, str, set, tuple, int, float, bytes, bool, complex, frozenset, bytearray):
        shared |= set(dir(t))
    shared |= set(dir(torch.nn.Module)) | set(dir(logging.Logger))
    members = {name: getattr(torch.Tensor, name, None) for name in dir(torch.Tensor) if not name.startswith("_")}
    methods = sorted(n for n, v in members.items() if callable(v) and not isinstance(v, type))
    attributes = sorted(n for n in members if n not in methods)
    in_python = sorted(n for n, v in vars(torch.Tensor).items() if inspect.isfunction(v) and not n.startswith("_"))
    # Names generic enough that a non-tensor object in model code may well define them.
    generic = {"put", "new", "fix", "resize", "set_", "apply_", "map_", "map2_", "storage", "rename",
               "refine_names", "align_to", "align_as", "record_stream", "module_load", "share_memory_",
               "untyped_storage", "dim_order", "is_set_to", "register_hook", "register_post_accumulate_grad_hook"}
    evidence = sorted(n for n in methods if n not in shared and n not in generic)
    nn_modules = sorted(
        name for name, obj in vars(torch.nn).items()
        if inspect.isclass(obj) and issubclass(obj, torch.nn.Module)
    )
    functions = sorted(
        name for name, obj in vars(torch).items()
        if not name.startswith("__") and callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj)
    )
    functional = sorted(n for n, o in vars(torch.nn.functional).items() if callable(o) and not n.startswith("_"))
    class_properties = _class_properties()
    facts = {
        "torch_version": torch.__version__.split("+")[0],
        "tensor_methods": methods,
        "tensor_attributes": attributes,
        "evidence_methods": evidence,
        "python_tensor_methods": in_python,
        "nn_module_classes": nn_modules,
        "torch_functions": functions,
        "functional": functional,
        "class_properties": class_properties,
    }
    OUT.write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(methods)} methods, {len(evidence)} evidence, {len(nn_modules)} nn classes, "
          f"{len(functions)} torch functions")


def _class_properties() -> dict[str, dict[str, str]]:
    """Qualified class name -> {attribute: "property" | "lazy_property"}, inherited ones included."""
    from torch.distributions.utils import lazy_property

    found: dict[str, dict[str, str]] = {}
    for package in (torch.nn, torch.distributions):
        for name, cls in vars(package).items():
            if not inspect.isclass(cls) or name.startswith("_"):
                continue
            kinds = {}
            for attr in sorted(dir(cls)):
                held = inspect.getattr_static(cls, attr) if not attr.startswith("__") else None
                if isinstance(held, (property, lazy_property)):
                    kinds[attr] = "lazy_property" if isinstance(held, lazy_property) else "property"
            if kinds:
                found[f"{package.__name__}.{name}"] = kinds
                found[f"{cls.__module__}.{cls.__qualname__}"] = kinds
    return dict(sorted(found.items()))


if __name__ == "__main__":
    main()
