"""A user's model for ``verify --model package.module:factory``: import it, run it with hooks.

Importing the user's module runs its code: that is what ``--model`` asks for (issue 15), and the
only place gpuport imports a user's code. The module path always comes from the command line,
never from a reference file (a file from another machine is untrusted).

The factory takes no arguments and returns ``(module, example_inputs)``: an ``nn.Module`` and a
tensor or a tuple/list of tensors. It is called after ``torch.manual_seed(0)``; the weights it
made on the recording machine are stored in the reference file and loaded back before comparing,
so both machines run the same weights even if initialisation differs between torch releases.
Every submodule's output is captured by a forward hook, in the order the forward pass reaches it,
so a failing comparison names the first layer that drifts.
"""

from __future__ import annotations

import copy
import importlib
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

MODEL_CASE = "model"
FINAL_OUTPUT = "(output)"
_SPEC = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


class ModelError(ValueError):
    """The model cannot be loaded or run; the message names the factory and says why."""


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def load_factory(spec: str) -> Callable[[], Any]:
    """Import ``package.module`` and return its ``factory`` attribute (dots allowed)."""
    if not _SPEC.fullmatch(spec):
        raise ModelError(f"--model {spec!r}: expected package.module:factory")
    module_name, _, attr = spec.partition(":")
    # As `python -m` does: the current folder first, so the user's package is found.
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # the user's code may raise anything while importing
        raise ModelError(
            f"--model {spec}: importing {module_name} failed ({_reason(exc)})"
        ) from None
    for part in attr.split("."):
        if not hasattr(target, part):
            raise ModelError(f"--model {spec}: {module_name} has no {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ModelError(f"--model {spec}: {attr!r} is not callable")
    factory: Callable[[], Any] = target
    return factory


def build_model(spec: str) -> tuple[nn.Module, tuple[Tensor, ...]]:
    """Call the factory (seeded) and check what it returned."""
    factory = load_factory(spec)
    torch.manual_seed(0)
    try:
        made = factory()
    except Exception as exc:  # the user's factory may raise anything
        raise ModelError(f"--model {spec}: the factory raised {_reason(exc)}") from None
    if not isinstance(made, tuple | list) or len(made) != 2:
        raise ModelError(f"--model {spec}: the factory must return (module, example_inputs)")
    module, inputs = made
    if not isinstance(module, nn.Module):
        raise ModelError(f"--model {spec}: the factory's first value is not a torch.nn.Module")
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, tuple | list) or not all(isinstance(t, Tensor) for t in inputs):
        raise ModelError(
            f"--model {spec}: the example inputs must be a tensor or a tuple of tensors"
        )
    module.eval()  # no dropout, running batch-norm statistics: the same answer twice
    return module, tuple(t.detach().cpu() for t in inputs)


def _first_tensor(value: object) -> Tensor | None:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, tuple | list):
        for item in value:
            found = _first_tensor(item)
            if found is not None:
                return found
    if isinstance(value, dict):
        for item in value.values():
            found = _first_tensor(item)
            if found is not None:
                return found
    return None


@contextmanager
def _hooks(module: nn.Module, captured: dict[str, Tensor]) -> Iterator[None]:
    seen: dict[str, int] = {}

    def hook_for(name: str) -> Callable[[nn.Module, Any, Any], None]:
        def hook(_module: nn.Module, _args: Any, output: Any) -> None:
            tensor = _first_tensor(output)
            if tensor is None:
                return
            seen[name] = seen.get(name, 0) + 1
            key = name if seen[name] == 1 else f"{name}#{seen[name]}"
            captured[key] = tensor.detach().to("cpu").clone()

        return hook

    handles = [
        sub.register_forward_hook(hook_for(name))
        for name, sub in module.named_modules()
        if sub is not module
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def run_model(module: nn.Module, inputs: tuple[Tensor, ...], device: str) -> dict[str, Tensor]:
    """Every layer's output in the order the forward pass reached it, then the model's own."""
    captured: dict[str, Tensor] = {}
    module = module.to(device)
    with torch.no_grad(), _hooks(module, captured):
        result = module(*(t.to(device) for t in inputs))
    final = _first_tensor(result)
    if final is not None:
        captured[FINAL_OUTPUT] = final.detach().to("cpu").clone()
    return captured


def reference_model(module: nn.Module) -> nn.Module:
    """A float64 CPU copy of ``module`` (integer buffers stay integers)."""
    return copy.deepcopy(module).to(device="cpu", dtype=torch.float64)


def load_weights(module: nn.Module, weights: dict[str, Tensor], spec: str) -> None:
    """Load the recorded weights; a clear error when the model here is not the recorded one."""
    own = module.state_dict()
    missing = sorted(set(own) - set(weights))
    extra = sorted(set(weights) - set(own))
    if missing or extra:
        parts = []
        if missing:
            parts.append("not recorded: " + ", ".join(missing[:5]))
        if extra:
            parts.append("not in this model: " + ", ".join(extra[:5]))
        raise ModelError(
            f"--model {spec}: its weights are not the recorded model's ({'; '.join(parts)})"
        )
    for name, tensor in own.items():
        got = weights[name]
        if got.shape != tensor.shape or got.dtype != tensor.dtype:
            raise ModelError(
                f"--model {spec}: weight {name} is {tuple(tensor.shape)} {tensor.dtype} here but "
                f"{tuple(got.shape)} {got.dtype} in the recording"
            )
    module.load_state_dict(weights, strict=True)
