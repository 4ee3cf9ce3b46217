"""The ``Tensor``: a NumPy array plus the autograd state PyTorch keeps for it.

Methods are thin delegations to the op table in ``retrograd.ops``; the autograd state is:
``requires_grad``, ``grad``, ``grad_fn`` and ``output_nr`` (which output of the node this is),
the version counter shared with views and detached aliases, and, for views, the root ``_base``.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import _dtype
from ._dtype import FROM_NUMPY, dtype, get_default_dtype, to_dtype
from .autograd.grad_mode import STATE
from .autograd.graph import RemovableHandle, VersionCounter

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't "
    "be populated during autograd.backward(). If you indeed want the .grad field to be populated for a "
    "non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
    "mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
    "more informations."
)
FLOAT_ONLY_ERROR = "only Tensors of floating point dtype can require gradients"
NON_LEAF_FLAG_ERROR = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
    "subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)


class Size(tuple):  # type: ignore[type-arg]
    """A shape: a tuple of ints printed as ``torch.Size([2, 3])``.

    >>> import retrograd as rg
    >>> rg.zeros(2, 3).shape
    torch.Size([2, 3])
    """

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class device:
    """The only device retrograd has: ``cpu``."""

    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type = type.type
        name = str(type).split(":")[0]
        if name != "cpu":
            raise RuntimeError(f"retrograd runs on the CPU only; device {type!r} is not available")
        self.type = "cpu"
        self.index = index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, device) or other == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")

    def __str__(self) -> str:
        return "cpu"

    def __repr__(self) -> str:
        return "device(type='cpu')"


CPU = device("cpu")


def _operand(x: Any) -> Any:
    """What a binary op accepts besides a Tensor: a Python number; NumPy values are converted."""
    t = type(x)
    if t is float or t is int or t is bool or isinstance(x, Tensor):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return Tensor._make(x.copy() if x.dtype in FROM_NUMPY else x.astype(np.float64))
    if isinstance(x, (int, float)):
        return x
    return NotImplemented


def _sizes(args: Sequence[Any]) -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size(...))`` all mean shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = args[0]
    return tuple(int(a) for a in args)


class Tensor:
    """An n-dimensional array that records the operations run on it for reverse-mode autodiff.

    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    __slots__ = (
        "_data", "_requires_grad", "_grad_fn", "_output_nr", "_grad", "_version_counter",
        "_base", "_view_version", "_accumulator", "_hooks", "_is_inference", "__weakref__", "__dict__",
    )
    __array_priority__ = 1000  # numpy defers ``ndarray * Tensor`` to Tensor.__rmul__

    def __init__(self, *args: Any) -> None:
        # torch.Tensor(data) or torch.Tensor(*sizes): a float tensor of the default dtype.
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            data = np.array(args[0], dtype=get_default_dtype().np)
        else:
            data = np.empty(_sizes(args), dtype=get_default_dtype().np)
        Tensor._init(self, data)

    @staticmethod
    def _init(t: Tensor, data: np.ndarray, requires_grad: bool = False) -> None:
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = None
        t._output_nr = 0
        t._grad = None
        t._version_counter = VersionCounter()
        t._base = None
        t._view_version = 0
        t._accumulator = None
        t._hooks = None
        t._is_inference = False

    @classmethod
    def _make(cls, data: np.ndarray, requires_grad: bool = False) -> Tensor:
        """Wrap an array without copying (the ops' fast path)."""
        t = object.__new__(cls)
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = None
        t._output_nr = 0
        t._grad = None
        t._version_counter = VersionCounter()
        t._base = None
        t._view_version = 0
        t._accumulator = None
        t._hooks = None
        t._is_inference = False
        return t

    # -- metadata -----------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_ops.reduce.normalize_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> dtype:
        return FROM_NUMPY[self._data.dtype]

    @property
    def device(self) -> device:
        return CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return int(self._data.itemsize)

    def stride(self, dim: int | None = None) -> Any:
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[_ops.reduce.normalize_dim(dim, self._data.ndim)]

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        return False

    def is_inference(self) -> bool:
        return self._is_inference

    @property
    def _version(self) -> int:
        return self._version_counter.value

    # -- autograd state -----------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` on a leaf in place; returns self.

        >>> import retrograd as rg
        >>> rg.ones(2).requires_grad_().requires_grad
        True
        """
        requires_grad = bool(requires_grad)
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(NON_LEAF_FLAG_ERROR)
            return self
        if requires_grad:
            if self._data.dtype.kind not in "fc":
                raise RuntimeError(FLOAT_ONLY_ERROR)
            if self._is_inference and not STATE.inference:
                raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> Any:
        if self._base is not None and self._view_version != self._version_counter.value:
            return self._refresh_view_grad_fn()
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def grad(self) -> Tensor | None:
        if self._grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value._data.shape != self._data.shape:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        fn = self._grad_fn
        if fn is None or fn._retained is None:
            return False
        ref = fn._retained.get(self._output_nr)
        return ref is not None and ref() is self

    def retain_grad(self) -> None:
        """Populate ``.grad`` of this non-leaf during backward (a no-op on leaves)."""
        if self._grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        fn = self._grad_fn
        if fn._retained is None:
            fn._retained = {}
        fn._retained[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new grad.

        >>> import retrograd as rg
        >>> x = rg.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> x.sum().backward(); x.grad.tolist()
        [2.0, 2.0]
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            self._hooks.append(hook)
            return RemovableHandle(self._hooks, hook)
        return self._grad_fn._register_tensor_hook(self._output_nr, hook)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves.

        >>> import retrograd as rg
        >>> x = rg.tensor(3.0, requires_grad=True)
        >>> (x ** 2).backward(); x.grad
        tensor(6.)
        """
        from .autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def _accumulate_grad(self, grad: Tensor, retained: bool = False) -> None:
        """Add ``grad`` into ``.grad`` (the engine calls this for leaves and retained non-leaves).

        Without ``create_graph`` the stored gradient is a private copy, then updated in place,
        as PyTorch does; with it, accumulation is out of place so the result stays differentiable.
        """
        current = self._grad
        if STATE.grad_enabled:  # create_graph=True
            self._grad = grad if current is None else current + grad
            return
        if current is None:
            self._grad = Tensor._make(np.array(grad._data, copy=True))
        elif current._requires_grad or not current._data.flags.writeable:
            self._grad = Tensor._make(current._data + grad._data)
        else:
            np.add(current._data, grad._data, out=current._data, casting="unsafe")
            current._version_counter.bump("add_")

    def _refresh_view_grad_fn(self) -> Any:
        return _ops.inplace.regenerate_view_grad_fn(self)

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's memory and version counter, cut from the graph.

        >>> import retrograd as rg
        >>> x = rg.ones(2, requires_grad=True)
        >>> x.detach().requires_grad
        False
        """
        out = Tensor._make(self._data)
        out._version_counter = self._version_counter
        out._is_inference = self._is_inference
        return out

    def detach_(self) -> Tensor:
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        out = Tensor._make(self._data)
        out._is_inference = self._is_inference
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data

    # -- conversion -----------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The underlying array (shared, not copied).

        >>> import retrograd as rg
        >>> rg.ones(2).numpy()
        array([1., 1.], dtype=float32)
        """
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        data = self._data
        if dtype is not None and np.dtype(dtype) != data.dtype:
            return data.astype(dtype)
        return data.copy() if copy else data

    def item(self) -> Any:
        """The single value as a Python number.

        >>> import retrograd as rg
        >>> rg.tensor([2.5]).item()
        2.5
        """
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no' if self._data.size == 0 else 'more than one'} "
                               "values is ambiguous" if self._data.size == 0 else
                               "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()).item())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(self._data.shape[0])

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __repr__(self) -> str:
        from ._format import tensor_repr

        return tensor_repr(self)

    __hash__ = object.__hash__

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild, (np.array(self._data), self._requires_grad))

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
        out = type(self).__new__(type(self))
        Tensor._init(out, self._data.copy(), self._requires_grad)
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """Cast (``to(dtype)``, ``to(other)``, ``to('cpu', dtype)``); returns self when nothing changes."""
        target = kwargs.get("dtype")
        for a in args:
            if isinstance(a, Tensor):
                target = a.dtype
            elif isinstance(a, (str, device)):
                device(a)
            elif a is not None:
                target = a
        if "device" in kwargs and kwargs["device"] is not None:
            device(kwargs["device"])
        if target is None:
            return self
        np_dtype = to_dtype(target).np
        if np_dtype == self._data.dtype:
            return self.clone() if kwargs.get("copy") else self
        return _apply(_E.to_dtype, (self, np_dtype))

    def type(self, dtype: Any = None) -> Any:
        if dtype is None:
            return f"torch.{_dtype.scalar_type_name(self._data.dtype)}Tensor"
        return self.to(dtype)

    def cpu(self) -> Tensor:
        return self

    def float(self) -> Tensor:
        return self.to(_dtype.float32)

    def double(self) -> Tensor:
        return self.to(_dtype.float64)

    def half(self) -> Tensor:
        return self.to(_dtype.float16)

    def long(self) -> Tensor:
        return self.to(_dtype.int64)

    def int(self) -> Tensor:
        return self.to(_dtype.int32)

    def short(self) -> Tensor:
        return self.to(_dtype.int16)

    def bool(self) -> Tensor:
        return self.to(_dtype.bool_)

    def byte(self) -> Tensor:
        return self.to(_dtype.uint8)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other.dtype)

    def clone(self, memory_format: Any = None) -> Tensor:
        return _apply(_E.clone, (self,))

    def contiguous(self, memory_format: Any = None) -> Tensor:
        if self._data.flags.c_contiguous:
            return self
        return _apply(_E.clone, (self,))

    def new_tensor(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        from .factories import tensor

        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _new_filled(self, 0, size, dtype, requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _new_filled(self, 1, size, dtype, requires_grad)

    def new_full(self, size: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _new_filled(self, fill_value, (size,), dtype, requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _new_filled(self, 0, size, dtype, requires_grad)

    # -- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented:
            return other
        return _apply(_E.add, (self, other, 1))

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented:
            return other
        return _apply(_E.sub, (self, other, 1))

    def __rsub__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented:
            return other
        if isinstance(other, Tensor):
            return _apply(_E.sub, (other, self, 1))
        return _apply(_E.rsub, (self, other, 1))

    def __mul__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented:
            return other
        return _apply(_E.mul, (self, other))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented:
            return other
        return _apply(_E.div, (self, other))

    def __rtruediv__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented:
            return other
        if isinstance(other, Tensor):
            return _apply(_E.div, (other, self))
        return _apply(_E.mul, (_apply(_E.reciprocal, (self,)), other))

    def __floordiv__(self, other: Any) -> Any:
        return self.div(other, rounding_mode="floor")

    def __rfloordiv__(self, other: Any) -> Any:
        return _as_tensor_like(other, self).div(self, rounding_mode="floor")

    def __mod__(self, other: Any) -> Any:
        return self.remainder(other)

    def __pow__(self, exponent: Any) -> Any:
        return self.pow(exponent)

    def __rpow__(self, base: Any) -> Any:
        base = _operand(base)
        if base is NotImplemented:
            return base
        if isinstance(base, Tensor):
            return base.pow(self)
        return _apply(_E.pow_scalar_base, (self, base))

    def __matmul__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented or not isinstance(other, Tensor):
            return NotImplemented
        return _ops.linalg.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented or not isinstance(other, Tensor):
            return NotImplemented
        return _ops.linalg.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _apply(_E.neg, (self,))

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _apply(_E.abs, (self,))

    def __invert__(self) -> Tensor:
        if self._data.dtype.kind == "b":
            return _apply(_E.logical_not, (self,))
        return _apply(_E.bitwise_not, (self,))

    def __and__(self, other: Any) -> Tensor:
        return _apply(_E.bitwise_and, (self, _operand(other)))

    __rand__ = __and__

    def __or__(self, other: Any) -> Tensor:
        return _apply(_E.bitwise_or, (self, _operand(other)))

    __ror__ = __or__

    def __xor__(self, other: Any) -> Tensor:
        return _apply(_E.bitwise_xor, (self, _operand(other)))

    __rxor__ = __xor__

    # augmented assignment: in place, like PyTorch
    def __iadd__(self, other: Any) -> Tensor:
        return self.add_(other)

    def __isub__(self, other: Any) -> Tensor:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Tensor:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self.div_(other)

    def __ipow__(self, other: Any) -> Tensor:
        return self.pow_(other)

    # comparisons: bool tensors, no gradient
    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        other = _operand(other)
        if other is NotImplemented or other is None:
            return False
        return _apply(_E.eq, (self, other))

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        other = _operand(other)
        if other is NotImplemented or other is None:
            return True
        return _apply(_E.ne, (self, other))

    def __lt__(self, other: Any) -> Tensor:
        return _apply(_E.lt, (self, _operand(other)))

    def __le__(self, other: Any) -> Tensor:
        return _apply(_E.le, (self, _operand(other)))

    def __gt__(self, other: Any) -> Tensor:
        return _apply(_E.gt, (self, _operand(other)))

    def __ge__(self, other: Any) -> Tensor:
        return _apply(_E.ge, (self, _operand(other)))

    eq = __eq__
    ne = __ne__
    lt = __lt__
    le = __le__
    gt = __gt__
    ge = __ge__
    greater = __gt__
    less = __lt__

    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _apply(_E.add, (self, _operand(other), alpha))

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _apply(_E.sub, (self, _operand(other), alpha))

    subtract = sub

    def mul(self, other: Any) -> Tensor:
        return _apply(_E.mul, (self, _operand(other)))

    multiply = mul

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        if rounding_mode is None:
            return _apply(_E.div, (self, _operand(other)))
        return _ops.extra_div(self, _operand(other), rounding_mode)

    divide = div
    true_divide = div

    def pow(self, exponent: Any) -> Tensor:
        exponent = _operand(exponent)
        if isinstance(exponent, Tensor):
            return _apply(_E.pow_tensor, (self, exponent))
        return _apply(_E.pow_scalar, (self, exponent))

    def neg(self) -> Tensor:
        return _apply(_E.neg, (self,))

    negative = neg

    def abs(self) -> Tensor:
        return _apply(_E.abs, (self,))

    absolute = abs

    def reciprocal(self) -> Tensor:
        return _apply(_E.reciprocal, (self,))

    def exp(self) -> Tensor:
        return _apply(_E.exp, (self,))

    def log(self) -> Tensor:
        return _apply(_E.log, (self,))

    def sqrt(self) -> Tensor:
        return _apply(_E.sqrt, (self,))

    def sin(self) -> Tensor:
        return _apply(_E.sin, (self,))

    def cos(self) -> Tensor:
        return _apply(_E.cos, (self,))

    def tanh(self) -> Tensor:
        return _apply(_E.tanh, (self,))

    def sigmoid(self) -> Tensor:
        return _apply(_E.sigmoid, (self,))

    def relu(self) -> Tensor:
        return _apply(_E.relu, (self,))

    def sign(self) -> Tensor:
        return _apply(_E.sign, (self,))

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            return _ops.clamp_tensor(self, min, max)
        return _apply(_E.clamp, (self, min, max))

    clip = clamp

    def clamp_min(self, min: Any) -> Tensor:  # noqa: A002
        return self.clamp(min=min)

    def clamp_max(self, max: Any) -> Tensor:  # noqa: A002
        return self.clamp(max=max)

    def where(self, condition: Tensor, other: Any) -> Tensor:
        return _apply(_E.where, (condition, self, _operand(other)))

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        return _apply(_E.masked_fill, (self, mask, _scalar_value(value)))

    def logical_not(self) -> Tensor:
        return _apply(_E.logical_not, (self,))

    def logical_and(self, other: Tensor) -> Tensor:
        return _apply(_E.logical_and, (self, other))

    def logical_or(self, other: Tensor) -> Tensor:
        return _apply(_E.logical_or, (self, other))

    # -- in-place -------------------------------------------------------------------------------
    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _apply_inplace(_E.add, (self, _operand(other), alpha))

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _apply_inplace(_E.sub, (self, _operand(other), alpha))

    def mul_(self, other: Any) -> Tensor:
        return _apply_inplace(_E.mul, (self, _operand(other)))

    def div_(self, other: Any) -> Tensor:
        return _apply_inplace(_E.div, (self, _operand(other)))

    def pow_(self, exponent: Any) -> Tensor:
        exponent = _operand(exponent)
        if isinstance(exponent, Tensor):
            return _apply_inplace(_E.pow_tensor, (self, exponent))
        return _apply_inplace(_E.pow_scalar, (self, exponent))

    def neg_(self) -> Tensor:
        return _apply_inplace(_E.neg, (self,))

    def abs_(self) -> Tensor:
        return _apply_inplace(_E.abs, (self,))

    def exp_(self) -> Tensor:
        return _apply_inplace(_E.exp, (self,))

    def log_(self) -> Tensor:
        return _apply_inplace(_E.log, (self,))

    def sqrt_(self) -> Tensor:
        return _apply_inplace(_E.sqrt, (self,))

    def sin_(self) -> Tensor:
        return _apply_inplace(_E.sin, (self,))

    def cos_(self) -> Tensor:
        return _apply_inplace(_E.cos, (self,))

    def tanh_(self) -> Tensor:
        return _apply_inplace(_E.tanh, (self,))

    def sigmoid_(self) -> Tensor:
        return _apply_inplace(_E.sigmoid, (self,))

    def relu_(self) -> Tensor:
        return _apply_inplace(_E.relu, (self,))

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        return _apply_inplace(_E.clamp, (self, min, max))

    clip_ = clamp_

    def zero_(self) -> Tensor:
        return _apply_inplace(_E.zero, (self,))

    def fill_(self, value: Any) -> Tensor:
        return _apply_inplace(_E.fill, (self, _scalar_value(value)))

    def copy_(self, src: Any, non_blocking: bool = False) -> Tensor:
        if not isinstance(src, Tensor):
            src = _as_tensor_like(src, self)
        return _apply_inplace(_E.copy, (self, src))

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        return _apply_inplace(_E.masked_fill, (self, mask, _scalar_value(value)))

    # -- reductions -----------------------------------------------------------------------------
    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        np_dtype = to_dtype(dtype).np if dtype is not None else None
        if dim is None:
            return _apply(_R.sum_all, (self, np_dtype))
        return _apply(_R.sum_dim, (self, _R.normalize_dims(dim, self._data.ndim), keepdim, np_dtype))

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        x = self if dtype is None else self.to(dtype)
        if dim is None:
            return _apply(_R.mean_all, (x,))
        return _apply(_R.mean_dim, (x, _R.normalize_dims(dim, self._data.ndim), keepdim))

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        if dim is None:
            return _apply(_R.max_all, (self,))
        if isinstance(dim, Tensor):
            return _ops.maximum(self, dim)
        values, indices = _apply(_R.max_dim, (self, _R.normalize_dim(dim, self._data.ndim), keepdim))
        return _ops.return_types.max(values, indices)

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        if dim is None:
            return _apply(_R.min_all, (self,))
        if isinstance(dim, Tensor):
            return _ops.minimum(self, dim)
        values, indices = _apply(_R.min_dim, (self, _R.normalize_dim(dim, self._data.ndim), keepdim))
        return _ops.return_types.min(values, indices)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        d = None if dim is None else _R.normalize_dim(dim, self._data.ndim)
        return _apply(_R.argmax, (self, d, keepdim))

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        d = None if dim is None else _R.normalize_dim(dim, self._data.ndim)
        return _apply(_R.argmin, (self, d, keepdim))

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
        ord_ = 2.0 if p in ("fro", None) else float(p)
        return _apply(_R.vector_norm, (self, ord_, _R.normalize_dims(dim, self._data.ndim), keepdim))

    def sum_to_size(self, *size: Any) -> Tensor:
        shape = _sizes(size)
        if shape == self._data.shape:
            return self
        return _apply(_R.sum_to_size, (self, shape))

    # -- shape ----------------------------------------------------------------------------------
    def view(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and (isinstance(shape[0], dtype) or isinstance(shape[0], type)):
            raise NotImplementedError("view(dtype) is not supported")
        return _apply(_S.view, (self, _sizes(shape)))

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(other._data.shape)

    def reshape(self, *shape: Any) -> Tensor:
        target = _sizes(shape)
        if _S.can_view(self._data, target):
            return _apply(_S.view, (self, target))
        return _apply(_S.unsafe_view, (self, target))

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other._data.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        ndim = self._data.ndim
        if ndim == 0:
            return self.reshape(1)
        start = _R.normalize_dim(start_dim, ndim)
        end = _R.normalize_dim(end_dim, ndim)
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if start == end:
            return self
        shape = self._data.shape
        return self.reshape(shape[:start] + (-1,) + shape[end + 1:])

    def ravel(self) -> Tensor:
        return self.reshape(-1)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        ndim = self._data.ndim
        return _apply(_S.transpose, (self, _R.normalize_dim(dim0, ndim), _R.normalize_dim(dim1, ndim)))

    swapaxes = transpose
    swapdims = transpose

    def t(self) -> Tensor:
        return _apply(_S.t, (self,))

    @property
    def T(self) -> Tensor:
        if self._data.ndim <= 1:
            return self
        return _apply(_S.permute, (self, tuple(range(self._data.ndim - 1, -1, -1))))

    @property
    def mT(self) -> Tensor:
        if self._data.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self._data.ndim}-D tensor.")
        return self.transpose(-2, -1)

    def permute(self, *dims: Any) -> Tensor:
        ndim = self._data.ndim
        return _apply(_S.permute, (self, tuple(_R.normalize_dim(d, ndim) for d in _sizes(dims))))

    def squeeze(self, dim: Any = None) -> Tensor:
        ndim = self._data.ndim
        if dim is None:
            return _apply(_S.squeeze_all, (self,))
        if isinstance(dim, (tuple, list)):
            return _apply(_S.squeeze_dims, (self, tuple(_R.normalize_dim(d, ndim) for d in dim)))
        return _apply(_S.squeeze_dim, (self, (_R.normalize_dim(dim, ndim),)))

    def unsqueeze(self, dim: int) -> Tensor:
        return _apply(_S.unsqueeze, (self, _R.normalize_dim(dim, self._data.ndim + 1)))

    def expand(self, *sizes: Any) -> Tensor:
        return _apply(_S.expand, (self, _sizes(sizes)))

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other._data.shape)

    def select(self, dim: int, index: int) -> Tensor:
        ndim = self._data.ndim
        if ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        d = _R.normalize_dim(dim, ndim)
        index = int(index)
        size = self._data.shape[d]
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
        return _apply(_S.select, (self, d, index % size))

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        d = _R.normalize_dim(dim, self._data.ndim)
        size = self._data.shape[d]
        start = int(start)
        if start < 0:
            start += size
        if not 0 <= start <= size or length < 0 or start + length > size:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
        return _apply(_S.slice_op, (self, d, start, start + int(length), 1))

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        return tuple(_apply(_S.unbind, (self, _R.normalize_dim(dim, self._data.ndim))))

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return _apply(_S.gather, (self, _R.normalize_dim(dim, self._data.ndim), index._data))

    def scatter(self, dim: int, index: Tensor, src: Any = None, *, value: Any = None) -> Tensor:
        source = src if src is not None else value
        source = source if isinstance(source, Tensor) else _as_tensor_like(source, self).expand(index.shape)
        return _apply(_S.scatter, (self, source, _R.normalize_dim(dim, self._data.ndim), index._data))

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return _apply(_S.scatter_add, (self, src, _R.normalize_dim(dim, self._data.ndim), index._data))

    def __getitem__(self, key: Any) -> Tensor:
        return _ops.indexing.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        _ops.indexing.setitem(self, key, value)

    # -- linear algebra and nn ------------------------------------------------------------------
    def matmul(self, other: Tensor) -> Tensor:
        return _ops.linalg.matmul(self, other)

    def mm(self, mat2: Tensor) -> Tensor:
        return _apply(_ops.linalg.mm, (self, mat2))

    def mv(self, vec: Tensor) -> Tensor:
        return _apply(_ops.linalg.mv, (self, vec))

    def dot(self, other: Tensor) -> Tensor:
        return _apply(_ops.linalg.dot, (self, other))

    def bmm(self, mat2: Tensor) -> Tensor:
        return _apply(_ops.linalg.bmm, (self, mat2))

    def softmax(self, dim: int, dtype: Any = None) -> Tensor:
        x = self if dtype is None else self.to(dtype)
        return _apply(_ops.nn.softmax, (x, _R.normalize_dim(dim, self._data.ndim)))

    def log_softmax(self, dim: int, dtype: Any = None) -> Tensor:
        x = self if dtype is None else self.to(dtype)
        return _apply(_ops.nn.log_softmax, (x, _R.normalize_dim(dim, self._data.ndim)))

    # -- more elementwise ops (keep this block for elementwise methods) ---------------------------

    # -- more reductions (keep this block for reduction methods) ----------------------------------

    # -- more shape and indexing ops (keep this block for shape/indexing methods) -----------------

    # -- more linear algebra (keep this block for linear-algebra methods) -------------------------

    # -- more nn methods (keep this block for nn-related methods) ---------------------------------
    def hardshrink(self, lambd: float = 0.5) -> Tensor:
        return _apply(_ops.nn.hardshrink, (self, lambd))

    def prelu(self, weight: Tensor) -> Tensor:
        from .nn.functional import prelu

        return prelu(self, weight)


def _rebuild(data: np.ndarray, requires_grad: bool) -> Tensor:
    return Tensor._make(data, requires_grad)


def _scalar_value(value: Any) -> Any:
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value._data.ndim} dimension(s)."
            )
        return value._data.item()
    return value.item() if isinstance(value, np.generic) else value


def _as_tensor_like(value: Any, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    arr = np.asarray(value)
    if arr.dtype.kind == "f" and not isinstance(value, np.ndarray):
        arr = arr.astype(like._data.dtype if like._data.dtype.kind == "f" else get_default_dtype().np)
    elif arr.dtype.kind in "iu" and not isinstance(value, np.ndarray):
        arr = arr.astype(np.int64)
    return Tensor._make(arr)


def _new_filled(like: Tensor, value: Any, size: Any, dtype: Any, requires_grad: bool) -> Tensor:
    np_dtype = to_dtype(dtype).np if dtype is not None else like._data.dtype
    t = Tensor._make(np.full(_sizes(size), value, dtype=np_dtype))
    if requires_grad:
        t.requires_grad_()
    return t


# The op table imports Tensor, so it is bound here, after the class exists.
from . import ops as _ops  # noqa: E402
from .ops import elementwise as _E  # noqa: E402
from .ops import reduce as _R  # noqa: E402
from .ops import shape as _S  # noqa: E402
from .ops.inplace import apply_inplace as _apply_inplace  # noqa: E402
from .ops.op import apply as _apply  # noqa: E402
