"""``retrograd.autograd``: ``backward``, ``grad``, grad modes, and the graph's classes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import grad_mode, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .anomaly_mode import is_anomaly_check_nan_enabled as is_anomaly_check_nan_enabled
from .anomaly_mode import is_anomaly_enabled as is_anomaly_enabled
from .engine import run_backward
from .grad_mode import *  # noqa: F403  (the six modes, named once in grad_mode.__all__)
from .gradcheck import GradcheckError as GradcheckError
from .gradcheck import gradcheck, gradgradcheck
from .graph import Node as Node
from .warn_state import warn_once

if TYPE_CHECKING:  # loaded on first use by __getattr__ below; named here for linters and type checkers
    from . import functional as functional
    from .function import Function
    from .function import FunctionCtx as FunctionCtx
    from .function import once_differentiable as once_differentiable

# torch.autograd.__all__'s names that retrograd has (the others stay reachable as attributes, as in
# torch: is_grad_enabled and is_inference_mode_enabled are torch's, not torch.autograd's, exports).
__all__ = [
    "Function", "backward", "grad_mode", "detect_anomaly", "grad", "gradcheck", "gradgradcheck",
    "set_detect_anomaly", *(n for n in grad_mode.__all__ if n not in ("is_grad_enabled", "is_inference_mode_enabled")),
]


CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid "
    "this. If you have to use this function, make sure to reset the .grad fields of your parameters to None "
    "after use to break the cycle and avoid the leak."
)


def _tensors(value: Any, what: str) -> tuple[Any, ...]:
    Tensor = graph._tensor_class()  # (cached: a function-level import costs µs per call)

    if isinstance(value, Tensor):
        return (value,)
    items = tuple(value)
    for item in items:
        if not isinstance(item, Tensor):
            raise TypeError(f"{what} must be Tensors, got {type(item).__name__}")
    return items


def _implicit_grad(out: Any) -> Any:
    """The gradient a root without a given one starts from: 1 for a scalar that requires grad
    (None for one that does not: the engine then names the root in its error)."""
    if not out._requires_grad:
        return None
    data = out._data
    if data.size != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if data.dtype.kind not in "fcV":
        raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
    # (np.array is about five times faster than np.ones for the usual 0-d loss)
    one = np.array(1, data.dtype) if data.ndim == 0 else np.ones(data.shape, data.dtype)
    return graph._tensor_class()._make(one)


def _make_grads(outputs: Sequence[Any], grad_outputs: Sequence[Any]) -> list[Any]:
    """The gradient to start from for each output: given, or an implicit 1 for scalars."""
    Tensor = graph._tensor_class()  # (cached: a function-level import costs µs per call)

    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            grads.append(_implicit_grad(out))
            continue
        if not isinstance(g, Tensor):
            g = Tensor._make(np.full(out._data.shape, g, out._data.dtype))
        if g._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a shape "
                f"of {out.shape}."
            )
        if g._data.dtype != out._data.dtype:
            g = g.to(out.dtype)
        grads.append(g)
    return grads


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the graph's leaves.

    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> rg.autograd.backward((x * 3).sum()); x.grad
    tensor([3., 3.])
    """
    outputs = _tensors(tensors, "tensors")
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads = _root_grads(outputs, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warn_once(CREATE_GRAPH_WARNING, UserWarning, stacklevel=2)  # (PyTorch's TORCH_WARN_ONCE)
    input_list = None
    if inputs is not None:
        input_list = _tensors(inputs, "inputs")
        if not input_list:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    run_backward(outputs, grads, bool(retain_graph), bool(create_graph), inputs=input_list, accumulate=True)


def _root_grads(outputs: tuple[Any, ...], given: Any) -> list[Any]:
    """The gradients backward starts from, one per output: ``given`` (a tensor, a sequence with
    None for "implicit"), implicit ones made by ``_make_grads``. As PyTorch, gradients beyond the
    outputs' count are ignored (its ``_make_grads`` zips them) and too few are the engine's error."""
    if given is None:  # (loss.backward(): no list of Nones to zip)
        return [_implicit_grad(out) for out in outputs]
    grad_list = list(_tensors_or_none(given))
    if len(grad_list) < len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grad_list)} gradients")
    return _make_grads(outputs, grad_list[:len(outputs)])


def _tensors_or_none(value: Any) -> tuple[Any, ...]:
    Tensor = graph._tensor_class()  # (cached: a function-level import costs µs per call)

    if value is None or isinstance(value, Tensor):
        return (value,)
    return tuple(value)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` is untouched).

    Only the part of the graph between them runs.

    >>> import retrograd as rg
    >>> x = rg.tensor(2.0, requires_grad=True)
    >>> rg.autograd.grad(x ** 3, x)
    (tensor(12.),)
    """
    Tensor = graph._tensor_class()  # (cached: a function-level import costs µs per call)

    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported")
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    outs = _tensors(outputs, "outputs")
    ins = _tensors(inputs, "inputs")
    grads = _root_grads(outs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    for t in ins:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    result = run_backward(outs, grads, bool(retain_graph), bool(create_graph), inputs=ins, accumulate=False)
    final = []
    for index, (t, g) in enumerate(zip(ins, result)):
        if g is None:
            if materialize_grads:
                g = Tensor._make(np.zeros(t._data.shape, t._data.dtype))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {index} appears to not have been used in the graph. Set "
                    "allow_unused=True if this is the desired behavior."
                )
        elif not create_graph and g._requires_grad:
            g = g.detach()
        final.append(g)
    return tuple(final)


# Loaded on first use (``import retrograd`` stays close to ``import numpy``).
_LAZY = {"Function": ".function", "FunctionCtx": ".function", "once_differentiable": ".function"}


def __getattr__(name: str) -> Any:
    import importlib

    if name == "functional":
        return importlib.import_module(".functional", __name__)
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
