"""The ``retrograd.<op>(tensor, ...)`` functions: PyTorch's functional spellings of the Tensor
methods, plus a few that take several tensors (``cat``, ``stack``, ``where``, ``allclose``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .ops import linalg as _linalg
from .ops import shape as _shape
from .ops.elementwise import where as _where_op
from .ops.op import apply
from .tensor import Tensor, _as_tensor_like, _operand


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else _as_tensor_like(x, Tensor._make(np.zeros(0, np.float32)))


def _method(name: str) -> Any:
    def function(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        return getattr(_t(input), name)(*args, **kwargs)

    function.__name__ = name
    function.__qualname__ = name
    function.__doc__ = (
        f"``retrograd.{name}(input, ...)`` is ``input.{name}(...)``.\n\n"
        f"    >>> import retrograd as rg\n    >>> callable(rg.{name})\n    True\n"
    )
    return function


_METHOD_FUNCTIONS = (
    "add sub subtract mul multiply div divide true_divide neg negative pow abs absolute reciprocal exp log "
    "sqrt sin cos tanh sigmoid relu sign clamp clip clamp_min clamp_max masked_fill sum mean max min argmax "
    "argmin norm reshape flatten ravel transpose swapaxes swapdims t permute squeeze unsqueeze narrow select "
    "unbind gather scatter scatter_add softmax log_softmax mm mv dot bmm clone logical_not logical_and "
    "logical_or eq ne lt le gt ge greater less remainder numel"
).split()
# Each topic lists its own functional spellings of Tensor methods here.
_ELEMENTWISE_FUNCTIONS: tuple[str, ...] = ()
_REDUCTION_FUNCTIONS: tuple[str, ...] = ()
_SHAPE_FUNCTIONS: tuple[str, ...] = ()
_LINALG_FUNCTIONS: tuple[str, ...] = ()

for _name in (*_METHOD_FUNCTIONS, *_ELEMENTWISE_FUNCTIONS, *_REDUCTION_FUNCTIONS, *_SHAPE_FUNCTIONS,
              *_LINALG_FUNCTIONS):
    globals()[_name] = _method(_name)
del _name


def matmul(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Matrix product with broadcasting (``input @ other``).

    >>> import retrograd as rg
    >>> rg.matmul(rg.eye(2), rg.ones(2)).tolist()
    [1.0, 1.0]
    """
    return _linalg.matmul(_t(input), _t(other))


def maximum(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise maximum; tied elements share the gradient.

    >>> import retrograd as rg
    >>> rg.maximum(rg.tensor([1., 5.]), rg.tensor([3., 2.])).tolist()
    [3.0, 5.0]
    """
    from .ops import maximum as _maximum

    return _maximum(_t(input), _operand(other))  # type: ignore[no-any-return]


def minimum(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise minimum; tied elements share the gradient.

    >>> import retrograd as rg
    >>> rg.minimum(rg.tensor([1., 5.]), rg.tensor([3., 2.])).tolist()
    [1.0, 2.0]
    """
    from .ops import minimum as _minimum

    return _minimum(_t(input), _operand(other))  # type: ignore[no-any-return]


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:  # noqa: A002
    """``input`` where ``condition`` holds, else ``other`` (broadcast; numbers allowed).

    >>> import retrograd as rg
    >>> rg.where(rg.tensor([True, False]), 1.0, 0.0).tolist()
    [1.0, 0.0]
    """
    if input is None and other is None:
        return tuple(Tensor._make(i) for i in np.nonzero(condition._data))
    return apply(_where_op, (condition, _operand(input), _operand(other)))


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along an existing dim.

    >>> import retrograd as rg
    >>> rg.cat([rg.ones(2), rg.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    return apply(_shape.cat, (*tensors, dim))  # type: ignore[no-any-return]


concat = cat
concatenate = cat


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Stack along a new dim.

    >>> import retrograd as rg
    >>> rg.stack([rg.ones(2), rg.zeros(2)]).shape
    torch.Size([2, 2])
    """
    return apply(_shape.stack, (*tensors, dim))  # type: ignore[no-any-return]


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a retrograd Tensor.

    >>> import retrograd as rg
    >>> rg.is_tensor(rg.ones(1)), rg.is_tensor([1])
    (True, False)
    """
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:  # noqa: A002
    """Whether the tensor's dtype is a floating dtype."""
    return input.is_floating_point()


def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """True when both tensors have the same shape and elements.

    >>> import retrograd as rg
    >>> rg.equal(rg.ones(2), rg.ones(2))
    True
    """
    return input._data.shape == other._data.shape and bool(np.array_equal(input._data, other._data))


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:  # noqa: A002
    """``|input - other| <= atol + rtol * |other|`` everywhere.

    >>> import retrograd as rg
    >>> rg.allclose(rg.ones(2), rg.ones(2) + 1e-9)
    True
    """
    return bool(np.allclose(input._data, _t(other)._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:  # noqa: A002
    """Elementwise ``allclose``."""
    return Tensor._make(np.isclose(input._data, _t(other)._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isnan(input: Tensor) -> Tensor:  # noqa: A002
    """Elementwise NaN test (bool tensor)."""
    return Tensor._make(np.isnan(input._data))


def isinf(input: Tensor) -> Tensor:  # noqa: A002
    """Elementwise infinity test (bool tensor)."""
    return Tensor._make(np.isinf(input._data))


def isfinite(input: Tensor) -> Tensor:  # noqa: A002
    """Elementwise finiteness test (bool tensor)."""
    return Tensor._make(np.isfinite(input._data))


__all__ = sorted(
    name for name, value in list(globals().items())
    if not name.startswith("_") and callable(value) and getattr(value, "__module__", None) == __name__
)
