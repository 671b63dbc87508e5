"""Amplifiers: where a graph break makes dynamo run a whole function eagerly, and how to say so.

A break inside a loop body, a `try` body or an `except` handler, or a `with` block of a context
manager dynamo cannot resume under makes dynamo skip the *whole function* (measured on torch 2.13:
tests/corpus/amplifiers_*.py); so does a break in a function called from such a place. The walker
keeps a stack of these; a finding under one says so in its message.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

# Context managers a graph break may happen under without dynamo giving up on the function.
SAFE_CONTEXT_MANAGERS = frozenset(
    {
        "torch.no_grad",
        "torch.enable_grad",
        "torch.inference_mode",
        "torch.set_grad_enabled",
        "torch.autograd.no_grad",
        "torch.autograd.enable_grad",
        "torch.autograd.set_grad_enabled",
        "torch.autograd.grad_mode.no_grad",
        "torch.autocast",
        "torch.amp.autocast",
        "torch.cpu.amp.autocast",
        "torch.cuda.amp.autocast",
        "torch.profiler.record_function",
        "torch.autograd.profiler.record_function",
        "torch.nn.attention.sdpa_kernel",
        "contextlib.nullcontext",
    }
)


@dataclass(frozen=True)
class Amplifier:
    """Why a break makes dynamo run a whole function eagerly."""

    kind: str  # "loop" | "try" | "except" | "with" | "comprehension" | "generator" | "property" | "caller"
    node: ast.AST
    label: str  # e.g. "`for` loop", "`with torch.device(...)` block"
    function: str  # the function dynamo runs eagerly
    callee: str = ""  # for "caller": the function whose break it is
    certain: bool = True  # False for comprehensions (see Effect.MAY_SKIP)
    # For "caller": the call in `function` from which dynamo runs it eagerly, and whether that call
    # stands under an `if` there (then later code may still be traced on the other path).
    site: ast.AST | None = None
    conditional: bool = False
    # For "caller": the function called at `site` is a TorchScript function. Once `function` runs
    # eagerly there, the call runs TorchScript with no Python frame: dynamo never sees the code below.
    site_runs_script: bool = False


def amplifier_sentence(amplifier: Amplifier) -> str:
    """The sentence that says why the break costs the whole function."""
    line = getattr(amplifier.node, "lineno", "?")
    if not amplifier.certain:
        where = (
            f"`{amplifier.callee}` is called inside the comprehension on line {line} of `{amplifier.function}`"
            if amplifier.kind == "caller"
            else f"It is inside the comprehension on line {line}"
        )
        return (
            f"{where}, a loop dynamo cannot resume in: on Python 3.11 it may run the comprehension eagerly "
            f"(depending on what it iterates over), and from Python 3.12, which inlines comprehensions, it runs "
            f"all of `{amplifier.function}` eagerly."
        )
    if amplifier.kind == "caller":
        return (
            f"`{amplifier.callee}` is called inside the {amplifier.label} on line {line} of `{amplifier.function}`, "
            f"so dynamo runs `{amplifier.function}` eagerly."
        )
    reason = {
        "loop": "dynamo cannot resume inside a loop",
        "generator": "dynamo cannot resume inside a generator expression",
        "try": "dynamo cannot resume inside exception handling",
        "except": "dynamo cannot resume inside exception handling",
        "with": "dynamo cannot resume under that context manager",
        "property": "dynamo cannot resume inside an attribute read",
    }[amplifier.kind]
    return (
        f"It is inside the {amplifier.label} on line {line} and {reason}, so it runs the whole function "
        f"`{amplifier.function}` eagerly."
    )


def related_text(amplifier: Amplifier) -> str:
    """The words on the loop, `try` or `with` shown as the finding's related location."""
    if amplifier.kind == "caller":
        return f"the call inside the {amplifier.label} that makes dynamo run `{amplifier.function}` eagerly"
    return f"the {amplifier.label} that makes dynamo run `{amplifier.function}` eagerly"
