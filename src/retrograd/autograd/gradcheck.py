"""``gradcheck`` and ``gradgradcheck``: compare autograd's Jacobians with finite differences.

Use float64 inputs: central differences with ``eps=1e-6`` are only accurate in double precision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical Jacobians differ."""


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_outputs(outputs: tuple[Any, ...]) -> list[Any]:
    from ..tensor import Tensor

    return [o for o in outputs if isinstance(o, Tensor) and o._data.dtype.kind == "f"]


def _numerical_jacobians(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[int],
                         eps: float) -> list[list[np.ndarray]]:
    """J[i][o] with shape (numel(input i), numel(output o)), by central differences."""
    with no_grad():
        outs = _differentiable_outputs(_as_tuple(func(*inputs)))
        result = [[np.zeros((inputs[i]._data.size, o._data.size)) for o in outs] for i in diff]
        for row, i in enumerate(diff):
            data = inputs[i]._data
            for j, idx in enumerate(np.ndindex(data.shape)):
                original = data[idx].copy()
                data[idx] = original + eps
                plus = [o._data.astype(np.float64).reshape(-1).copy()
                        for o in _differentiable_outputs(_as_tuple(func(*inputs)))]
                data[idx] = original - eps
                minus = [o._data.astype(np.float64).reshape(-1).copy()
                         for o in _differentiable_outputs(_as_tuple(func(*inputs)))]
                data[idx] = original
                for k, (p, m) in enumerate(zip(plus, minus)):
                    result[row][k][j] = (p - m) / (2 * eps)
    return result


def _analytical_jacobians(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[int]) -> list[list[np.ndarray]]:
    from ..tensor import Tensor
    from . import grad

    outs = _differentiable_outputs(_as_tuple(func(*inputs)))
    result = [[np.zeros((inputs[i]._data.size, o._data.size)) for o in outs] for i in diff]
    for k, out in enumerate(outs):
        if not out._requires_grad:
            continue  # does not depend on any input: the Jacobian is zero
        for j in range(out._data.size):
            onehot = np.zeros(out._data.size, out._data.dtype)
            onehot[j] = 1
            grads = grad(out, [inputs[i] for i in diff], Tensor._make(onehot.reshape(out._data.shape)),
                         retain_graph=True, allow_unused=True)
            for row, g in enumerate(grads):
                if g is not None:
                    result[row][k][:, j] = g._data.astype(np.float64).reshape(-1)
    return result


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **unused: Any,
) -> bool:
    """Check ``func``'s gradients against central finite differences.

    >>> import retrograd as rg
    >>> x = rg.tensor([0.3, 0.7], dtype=rg.float64, requires_grad=True)
    >>> rg.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
    """
    from ..tensor import Tensor

    inputs = _as_tuple(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them have requires_grad=True.")
    numerical = _numerical_jacobians(func, inputs, diff, eps)
    analytical = _analytical_jacobians(func, inputs, diff)
    if len(numerical[0]) != len(analytical[0]):
        raise GradcheckError(
            f"function returned {len(analytical[0])} differentiable outputs with grad enabled but "
            f"{len(numerical[0])} under no_grad"
        )
    for row, i in enumerate(diff):
        for k, (a, n) in enumerate(zip(analytical[row], numerical[row])):
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n"
                )
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Sequence[Any] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
    **unused: Any,
) -> bool:
    """Check second derivatives: gradcheck of the (create_graph) vector-Jacobian product.

    >>> import retrograd as rg
    >>> x = rg.tensor([0.3, 0.7], dtype=rg.float64, requires_grad=True)
    >>> rg.autograd.gradgradcheck(lambda t: t.exp() * t, (x,))
    True
    """
    from ..tensor import Tensor
    from . import grad

    inputs = _as_tuple(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]
    outs = _differentiable_outputs(_as_tuple(func(*inputs)))
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [Tensor._make(rng.standard_normal(o._data.shape).astype(o._data.dtype), True) for o in outs]
    else:
        grad_outputs = list(grad_outputs)
    n = len(inputs)

    def vjp(*args: Any) -> tuple[Any, ...]:
        # The finite-difference pass calls this under no_grad; the vjp itself needs a graph.
        with enable_grad():
            ins, gos = args[:n], args[n:]
            outputs = _differentiable_outputs(_as_tuple(func(*ins)))
            pairs = [(o, g) for o, g in zip(outputs, gos) if o._requires_grad]
            if not pairs:
                return ()
            grads = grad([o for o, _ in pairs], [ins[i] for i in diff], [g for _, g in pairs],
                         create_graph=True, allow_unused=True)
        # Unused inputs get explicit zeros so every call returns the same outputs.
        return tuple(g if g is not None else ins[i] * 0 for i, g in zip(diff, grads))

    return gradcheck(vjp, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
