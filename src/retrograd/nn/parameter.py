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



class _UninitializedMixin:
    """A placeholder of no shape for a lazy module's parameter or buffer, until ``materialize``."""

    cls_to_become: type = Tensor
    _data: np.ndarray

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the placeholder storage of ``shape`` (uninitialised values) and make it a plain
        ``cls_to_become`` (``Parameter`` or ``Tensor``) in place."""
        from ..factories import empty

        if dtype is None:
            dtype = _dtype_of(self._data.dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self._data = empty(shape, dtype=dtype)._data
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def detach(self) -> Any:
        # (what state_dict stores: still a placeholder, as in PyTorch)
        return type(self)(requires_grad=False, dtype=_dtype_of(self._data.dtype))  # type: ignore[call-arg]

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(requires_grad=self._requires_grad, dtype=_dtype_of(self._data.dtype))  # type: ignore[attr-defined,call-arg]
        memo[id(self)] = out
        return out


def _dtype_of(np_dtype: np.dtype) -> Any:
    from .._dtype import FROM_NUMPY

    return FROM_NUMPY[np_dtype]


class UninitializedParameter(_UninitializedMixin, Parameter):
    """A parameter whose shape is not known yet (a lazy module's, until its first forward).

    >>> import retrograd as rg
    >>> p = rg.nn.parameter.UninitializedParameter()
    >>> p
    <UninitializedParameter>
    >>> p.materialize((2, 3)); type(p).__name__, p.shape
    ('Parameter', torch.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> UninitializedParameter:
        from ..factories import empty

        return Parameter.__new__(cls, empty(0, dtype=dtype), requires_grad)  # type: ignore[return-value]

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise RuntimeError("Can't pickle an uninitialized parameter")


class UninitializedBuffer(_UninitializedMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy norm's running statistics).

    >>> import retrograd as rg
    >>> b = rg.nn.parameter.UninitializedBuffer()
    >>> b.materialize(3); type(b).__name__, b.shape, b.requires_grad
    ('Tensor', torch.Size([3]), False)
    """

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> UninitializedBuffer:
        from ..factories import empty

        out = object.__new__(cls)
        Tensor._init(out, empty(0, dtype=dtype)._data)
        out.requires_grad_(requires_grad)
        return out

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> None:
        pass
