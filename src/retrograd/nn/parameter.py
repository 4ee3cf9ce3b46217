"""``Parameter`` (a leaf Tensor a Module registers as learnable) and ``Buffer`` (a Tensor it
registers as state).

A Parameter shares memory and version counter with the tensor it wraps, is always a leaf, and
requires grad unless told otherwise; ops on it give plain Tensors, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor


class Parameter(Tensor):
    """A Tensor that a ``Module`` registers as a parameter when assigned as an attribute.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0, 2.0]))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    >>> type(p * 2).__name__
    'Tensor'
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = Tensor._make(np.empty((0,), dtype=np.float32))
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
        out = object.__new__(cls)
        Tensor._init(out, data._data)
        out._version_counter = data._counter()  # shares ``data``'s storage and versions
        out._is_inference = data._is_inference  # type: ignore[attr-defined]
        out.requires_grad_(requires_grad)
        return out

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        out = Parameter(Tensor._make(self._data.copy()), self._requires_grad)
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (np.array(self._data), self._requires_grad))


def _rebuild_parameter(data: np.ndarray, requires_grad: bool) -> Parameter:
    return Parameter(Tensor._make(data), requires_grad)


class _BufferMeta(type):
    # ``isinstance(t, Buffer)`` is true for tensors marked by ``Buffer(...)``.
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a buffer: ``module.x = nn.Buffer(t)`` registers it (``persistent`` says
    whether it goes into ``state_dict``). The result is a plain Tensor sharing ``data``'s memory.

    >>> import retrograd as rg
    >>> m = rg.nn.Module(); m.running = rg.nn.Buffer(rg.zeros(2))
    >>> [name for name, _ in m.named_buffers()]
    ['running']
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:  # type: ignore[misc]
        if data is None:
            data = Tensor._make(np.empty((0,), dtype=np.float32))
        out = data.detach()
        out._requires_grad = data._requires_grad and data._grad_fn is None
        out._is_buffer = True  # type: ignore[attr-defined]
        out.persistent = persistent  # type: ignore[attr-defined]
        return out

