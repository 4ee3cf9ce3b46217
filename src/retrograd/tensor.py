"""The ``Tensor``: a NumPy array plus the autograd state PyTorch keeps for it.

Methods are thin delegations to the op table in ``retrograd.ops``; the autograd state is:
``requires_grad``, ``grad``, ``grad_fn`` and ``output_nr`` (which output of the node this is),
the version counter shared with views and detached aliases, and, for views, the root ``_base``.

The class has one block per topic: metadata, autograd state, conversion, arithmetic and
elementwise math, in-place, reductions, shape and indexing, linear algebra and nn. The op table
is bound at the bottom of the module (operators, hot call paths and declared ``variants``).
"""

from __future__ import annotations

import builtins
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _dtype
from . import autograd as _autograd  # (backward read at each call, as PyTorch's Tensor.backward does)
from ._dtype import FROM_NUMPY, dtype, get_default_dtype, to_dtype
from .autograd.anomaly_mode import ANOMALY, note_origin, note_round_trip
from .autograd.grad_mode import STATE
from .autograd.graph import RemovableHandle, VersionCounter, _is_dense, new_counter

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't "
    "be populated during autograd.backward(). If you indeed want the .grad field to be populated for a "
    "non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
    "mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
    "more information."
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

    def __getitem__(self, index: Any) -> Any:
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class device:
    """The only device retrograd has: ``cpu``."""

    __slots__ = ("type", "index")
    type: str
    index: builtins.int | None

    def __init__(self, type: Any = "cpu", index: int | None = None) -> None:  # noqa: A002
        kind = type.type if isinstance(type, device) else type
        name = str(kind).split(":")[0]
        if name != "cpu":
            raise RuntimeError(f"retrograd runs on the CPU only; device {kind!r} is not available")
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


# References to a gradient held by the engine when it reaches _accumulate_grad (see there).
_ENGINE_REFERENCES = 4
# ``div``'s rounding_mode when not given: PyTorch records DivBackward0 then, but DivBackward2 for
# an explicit ``rounding_mode=None``.
_NO_ROUNDING: Any = object()


def _select_arguments(dim: Any, index: Any) -> None:
    """PyTorch's TypeError for ``select`` given a dim or index that is no int (NumPy would truncate 1.0)."""
    from ._factory_args import is_int, type_name

    for arg, position, value in (("dim", 1, dim), ("index", 2, index)):
        if not is_int(value):
            raise TypeError(f"select(): argument '{arg}' (position {position}) must be int, not {type_name(value)}")


def _is_same_size(self: Tensor, other: Any) -> bool:
    """``t.is_same_size(other)``: PyTorch's TypeError naming ``other`` when it is no tensor."""
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    return self._data.shape == other._data.shape


def _no_keywords(name: str, other: Any, kwargs: dict[str, Any]) -> TypeError:
    """PyTorch's error for ``true_divide(other, rounding_mode=...)``: its overloads take ``other`` only."""
    got = ", ".join([type(other).__name__, *(f"{k}={type(v).__name__}" for k, v in kwargs.items())])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     " * (Tensor other)\n * (Number other)\n")


def _operand(x: Any) -> Any:
    """What a binary op accepts besides a Tensor: a Python number; NumPy values are converted."""
    t = type(x)
    if t is float or t is int or t is bool or isinstance(x, Tensor):
        return x
    if isinstance(x, np.generic):
        # PyTorch reads a NumPy bool scalar as a float number (it is no Python bool or int).
        return float(x) if isinstance(x, np.bool_) else x.item()
    if isinstance(x, np.ndarray):
        return Tensor._make(x.copy() if x.dtype in FROM_NUMPY else x.astype(np.float64))
    if isinstance(x, (int, float, complex)):
        return x
    return NotImplemented


def _float_power_dtype(base: Tensor, exponent: Any) -> Any:
    """float_power's result dtype: complex128 when either operand is complex, else float64."""
    if base.is_complex() or (exponent.is_complex() if isinstance(exponent, Tensor) else isinstance(exponent, complex)):
        return _dtype.complex128
    return _dtype.float64


def _view_dtype(self: Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Tensor:
    """``view(dtype)``: the same memory read as another dtype, as PyTorch's ``view_dtype``. A
    different element size scales the last dim (which must be contiguous) and the other strides;
    the result shares the version counter and is never differentiable (not a view for autograd).

    >>> import retrograd as rg
    >>> rg.ones(2, dtype=rg.float32).view(rg.int32).tolist()
    [1065353216, 1065353216]
    """
    if set(kwargs) - {"dtype"} or len(args) + len(kwargs) != 1:
        got = ", ".join(["torch.dtype" if isinstance(a, dtype) else type(a).__name__ for a in args]
                        + [f"{k}=" for k in kwargs])
        raise TypeError(f"view() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (torch.dtype dtype)\n * (tuple of ints size)\n")
    target = to_dtype(args[0] if args else kwargs["dtype"])
    data = self._data
    old, new = data.itemsize, target.itemsize
    if old != new:
        names = f"view {_dtype.scalar_type_name(data.dtype)} as {_dtype.scalar_type_name(target.np)} (different element sizes)"
        if data.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to {names}")
        strides = self.stride()
        last_ok = strides[-1] == 1 or data.shape[-1] == 1 or data.size == 0  # (PyTorch's strides there are 1)
        if new < old and not last_ok:
            raise RuntimeError(f"self.stride(-1) must be 1 to {names}, but got {strides[-1]}")
        if new > old:
            ratio = new // old
            if data.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to {names}, but got {data.shape[-1]}")
            root = data
            while isinstance(root.base, np.ndarray):
                root = root.base
            offset = (data.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // old
            if offset % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to {names}, but got {offset}")
            if not last_ok:
                raise RuntimeError(f"self.stride(-1) must be 1 to {names}, but got {strides[-1]}")
            for k, s in enumerate(strides[:-1]):
                if s % ratio:
                    raise RuntimeError(f"self.stride({k}) must be divisible by {ratio} to {names}, but got {s}")
        if data.strides[-1] != old:  # (a last dim of size 1 may carry any NumPy stride)
            data = np.lib.stride_tricks.as_strided(data, data.shape, data.strides[:-1] + (old,))
    out = Tensor._make(data.view(target.np))
    out._version_counter = self._counter()  # in-place writes through either are seen by both
    return out


_CPP_TYPE_NAMES = {
    "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double", "int8": "signed char",
    "uint8": "unsigned char", "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def _cpp_type_name(np_dtype: np.dtype) -> str:
    """The C++ element type name PyTorch's messages use for a dtype (``double``, ``long int``)."""
    return _CPP_TYPE_NAMES.get(np_dtype.name, np_dtype.name)


def _sizes(args: Sequence[Any]) -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size(...))`` all mean shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = args[0]
    for s in args:
        if type(s) is not builtins.int:  # (an ``np.int64``, a bool, a 0-d tensor: converted)
            return tuple(map(builtins.int, args))
    # Already a tuple of ints (``x.view(2, 3)``, a ``.shape``): itself, no new tuple.
    return args if type(args) is tuple else tuple(args)


def element_strides(data: np.ndarray) -> tuple[builtins.int, ...]:
    """An array's strides in elements, as ``Tensor.stride()`` reports them.

    >>> element_strides(np.zeros((2, 3), np.float32)), element_strides(np.zeros((0, 3)))
    ((3, 1), (3, 1))
    """
    strides = tuple(s // data.itemsize for s in data.strides)
    if not data.size and not any(strides) and data.flags.writeable:
        # NumPy zeroes a new empty array's; PyTorch's are contiguous. (An expand's, read-only, are its own.)
        return _contiguous_strides(data.shape)
    return strides


def _contiguous_strides(shape: Sequence[builtins.int]) -> tuple[builtins.int, ...]:
    """PyTorch's strides of a contiguous tensor (a size-0 dim counts as 1)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= builtins.max(n, 1)
    return tuple(reversed(strides))


class Tensor:
    """An n-dimensional array that records the operations run on it for reverse-mode autodiff.

    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    # Every tensor sets these three; the rest are class-level defaults, and a tensor that needs
    # another value gets it in its own __dict__ (made on first write). Most op outputs never do,
    # which keeps creating a tensor cheap (see "Tensor state" in docs/architecture.md).
    __slots__ = ("_data", "_requires_grad", "_grad_fn", "__weakref__", "__dict__")
    __array_priority__ = 1000  # numpy defers ``ndarray * Tensor`` to Tensor.__rmul__
    _data: np.ndarray
    _requires_grad: builtins.bool
    _grad_fn: Any  # Node | None
    _output_nr: builtins.int = 0  # which output of _grad_fn this is
    _grad: Tensor | None = None
    _version_counter: VersionCounter | None = None  # made on first write, save or view: _counter()
    _base: Tensor | None = None  # the root tensor, for a view
    _view_version: builtins.int = 0  # version at which a view's grad_fn was last set
    _accumulator: Any = None  # weak reference to the leaf's AccumulateGrad
    _hooks: list[Callable[..., Any]] | None = None  # a leaf's tensor hooks
    _post_accumulate_grad_hooks: list[Callable[..., Any]] | None = None  # run after .grad is updated
    _is_inference: builtins.bool = False
    _inference_detached: builtins.bool = False  # an inference tensor's detach()/.data made outside it: has a version
    # How a view was made, when in-place writes through it must be refused (PyTorch's
    # CreationMeta): None, "no_grad", "inference", "custom" (output of a custom Function) or
    # "multi" (one of several view outputs); a view of such a view inherits it.
    _creation_meta: str | None = None
    # How an untracked tensor was cut from a graph, for ``retrograd.debug.explain_grad``: "detach",
    # "data" or "tensor_copy", or an ``Origin`` with the user's file:line while creation sites are
    # recorded (anomaly mode, ``record_sites()``). ``_grad_reset``: (origin or None, version of the
    # zeroed grad or None) after ``zero_grad()``.
    _origin: Any = None
    _grad_reset: Any = None
    _fw_grad: Any = None  # forward AD: (level, tangent), set by autograd.forward_ad.make_dual and the ops

    def __init__(self, *args: Any) -> None:
        # torch.Tensor(data) or torch.Tensor(*sizes): a float tensor of the default dtype.
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            data = np.array(args[0], dtype=get_default_dtype().np)
        else:
            data = np.empty(_sizes(args), dtype=get_default_dtype().np)
        Tensor._init(self, data)

    @staticmethod
    def _init(t: Tensor, data: np.ndarray, requires_grad: builtins.bool = False) -> None:
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = None

    @classmethod
    def _make(cls, data: np.ndarray, requires_grad: builtins.bool = False) -> Tensor:
        """Wrap an array without copying."""
        t = object.__new__(cls)
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = None
        return t

    def _counter(self) -> VersionCounter:
        """This storage's version counter, made on first need."""
        counter = self._version_counter
        if counter is None:
            counter = new_counter(self)
        return counter

    # -- metadata -----------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: builtins.int | None = None) -> Any:
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
    def is_cuda(self) -> builtins.bool:
        return False

    @property
    def ndim(self) -> builtins.int:
        return self._data.ndim

    def dim(self) -> builtins.int:
        return self._data.ndim

    def ndimension(self) -> builtins.int:
        return self._data.ndim

    def numel(self) -> builtins.int:
        return int(self._data.size)

    def nelement(self) -> builtins.int:
        return int(self._data.size)

    def element_size(self) -> builtins.int:
        return int(self._data.itemsize)

    def stride(self, dim: builtins.int | None = None) -> Any:
        strides = element_strides(self._data)
        return strides if dim is None else strides[_ops.reduce.normalize_dim(dim, self._data.ndim)]

    def is_contiguous(self) -> builtins.bool:
        return bool(self._data.flags.c_contiguous)

    def is_floating_point(self) -> builtins.bool:
        return self._data.dtype.kind in "fV"

    def is_complex(self) -> builtins.bool:
        return self._data.dtype.kind == "c"

    # -- complex parts (ops/complex.py) ---------------------------------------------------------
    @property
    def real(self) -> Tensor:
        """The real part, a view (the tensor itself when it is real).

        >>> import retrograd as rg
        >>> rg.tensor([1 + 2j]).real
        tensor([1.])
        """
        return _Cx.real(self)

    @real.setter
    def real(self, value: Any) -> None:
        _Cx.real(self).copy_(value)

    @property
    def imag(self) -> Tensor:
        """The imaginary part, a view; PyTorch's RuntimeError for a real tensor."""
        return _Cx.imag(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        _Cx.imag(self).copy_(value)

    def conj(self) -> Tensor:
        """The complex conjugate (the tensor itself when it is real). A conjugated copy, not
        PyTorch's lazy view: NumPy has no conjugate bit, so ``is_conj()`` stays False.

        >>> import retrograd as rg
        >>> rg.tensor([1 + 2j]).conj()
        tensor([1.-2.j])
        """
        if self._data.dtype.kind != "c":
            return self
        return _apply(_Cx.conj, (self,))  # type: ignore[no-any-return]

    def conj_physical(self) -> Tensor:
        """The complex conjugate, computed (the tensor itself when it is real)."""
        if self._data.dtype.kind != "c":
            return self
        return _apply(_Cx.conj_physical, (self,))  # type: ignore[no-any-return]

    def conj_physical_(self) -> Tensor:
        """Conjugate in place (nothing to do for a real tensor)."""
        if self._data.dtype.kind != "c":
            return self
        return _apply_inplace(_Cx.conj_physical, (self,))  # type: ignore[no-any-return]

    def is_conj(self) -> builtins.bool:
        """Always False: ``conj()`` materialises, so no tensor carries a conjugate bit."""
        return False

    def resolve_conj(self) -> Tensor:
        """The tensor itself: no tensor carries a conjugate bit (see ``conj``)."""
        return self

    def is_neg(self) -> builtins.bool:
        """Always False: no tensor carries a negative bit."""
        return False

    def resolve_neg(self) -> Tensor:
        """The tensor itself: no tensor carries a negative bit."""
        return self

    def is_inference(self) -> builtins.bool:
        return self._is_inference

    @property
    def _version(self) -> builtins.int:
        if self._is_inference and not self._inference_detached:
            raise RuntimeError("Inference tensors do not track version counter.")
        counter = self._version_counter
        return 0 if counter is None else counter.value

    def _is_view(self) -> builtins.bool:
        """Whether this tensor is a view of another (it then has a ``_base``).

        >>> import retrograd as rg
        >>> x = rg.zeros(2, 3)
        >>> x.t()._is_view(), x.clone()._is_view(), x.detach()._is_view()
        (True, False, False)
        """
        return self._base is not None

    # -- autograd state -----------------------------------------------------------------------
    @property
    def requires_grad(self) -> builtins.bool:
        if (self._base is not None and not self._requires_grad and self._creation_meta is None
                and self._view_version != self._counter().value):
            # A view whose base was written since: the write may have made the base require grad.
            self._refresh_view_grad_fn()
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: builtins.bool) -> None:
        if type(flag) is not builtins.bool:
            raise RuntimeError("requires_grad must be a bool")
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: builtins.bool = True) -> Tensor:
        """Set ``requires_grad`` on a leaf in place; returns self.

        >>> import retrograd as rg
        >>> rg.ones(2).requires_grad_().requires_grad
        True
        """
        if type(requires_grad) is not builtins.bool:  # (PyTorch's parser takes no int, no NumPy bool)
            from ._factory_args import type_name

            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be bool, "
                            f"not {type_name(requires_grad)}")
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(NON_LEAF_FLAG_ERROR)
            return self
        if not requires_grad and self._base is not None and self._creation_meta in ("no_grad", "inference") \
                and self._base._requires_grad:
            return self  # a view made in no_grad mode requires grad while its base does, as in PyTorch
        if requires_grad:
            if self._data.dtype.kind not in "fcV":
                raise RuntimeError(FLOAT_ONLY_ERROR)
            if self._is_inference and not STATE.inference:
                raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> Any:
        if self._base is not None and self._view_version != self._counter().value:
            return self._refresh_view_grad_fn()
        return self._grad_fn

    @property
    def is_leaf(self) -> builtins.bool:
        return self._grad_fn is None

    @property
    def output_nr(self) -> builtins.int:
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
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_cpp_type_name(value._data.dtype)}' to a tensor "
                    f"with grad_dtype '{_dtype.scalar_type_name(self._data.dtype)}'. The gradient must match the "
                    "tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype "
                    "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with caution. "
                    "Diverging the dtypes of a tensor and its gradient may break downstream systems that assume "
                    "they match."
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor of size "
                    f"'{list(self._data.shape)}'. Please ensure that the gradient and the tensor are the same size"
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> builtins.bool:
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
        self._grad_fn._retain(self._output_nr, self)

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

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> RemovableHandle:
        """Call ``hook(tensor)`` on this leaf after its ``.grad`` has been accumulated in
        ``backward`` (not in ``autograd.grad``); the hook must return None.

        >>> import retrograd as rg
        >>> w = rg.ones(2, requires_grad=True)
        >>> h = w.register_post_accumulate_grad_hook(lambda t: print(t.grad.tolist()))
        >>> (w * 4).sum().backward()
        [4.0, 4.0]
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = []
        self._post_accumulate_grad_hooks.append(hook)
        return RemovableHandle(self._post_accumulate_grad_hooks, hook)

    def backward(self, gradient: Tensor | None = None, retain_graph: builtins.bool | None = None,
                 create_graph: builtins.bool = False, inputs: Any = None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves.

        >>> import retrograd as rg
        >>> x = rg.tensor(3.0, requires_grad=True)
        >>> (x ** 2).backward(); x.grad
        tensor(6.)
        """
        _autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def _accumulate_grad(self, grad: Tensor, retained: builtins.bool = False) -> None:
        """Add ``grad`` into ``.grad`` (the engine calls this for leaves and retained non-leaves).

        Without ``create_graph`` the first gradient is kept as is when nothing else can see it
        (PyTorch's rule; else a private copy), and later ones are added in place; with it,
        accumulation is out of place so the result stays differentiable, and the first gradient
        is stored through a recorded copy, as PyTorch's (never a view another node shares).
        """
        current = self._grad
        if STATE.grad_enabled:  # create_graph=True
            if current is not None:
                self._grad = current + grad
            elif retained or not _is_dense(self._data):
                # As PyTorch: a retained gradient, and a leaf's whose memory has gaps, are cloned
                # (``CloneBackward0``), so ``.grad`` is never a view another node's output shares.
                self._grad = grad.clone()
            else:
                # A leaf's first gradient is copied into memory laid out as the leaf's (PyTorch's
                # layout contract; ``CopyBackwards``), still differentiable through the copy.
                self._grad = Tensor._make(np.empty_like(self._data, dtype=grad._data.dtype)).copy_(grad)
            return
        if current is None:
            data = grad._data
            # Only the engine refers to ``grad`` (its buffer, the accumulator's and this frame's
            # names, getrefcount's argument) and only ``grad`` to its array (plus ``data`` and
            # the argument): nobody else can see it change, so it becomes ``.grad`` uncopied.
            if (not retained and type(grad) is Tensor and data.base is None and data.flags.writeable
                    and sys.getrefcount(grad) <= _ENGINE_REFERENCES and sys.getrefcount(data) <= 3):
                self._grad = grad
            else:
                self._grad = Tensor._make(np.array(data, copy=True))
        elif current._requires_grad or not current._data.flags.writeable:
            self._grad = Tensor._make(current._data + grad._data)
        else:
            np.add(current._data, grad._data, out=current._data, casting="unsafe")
            current._counter().bump("add_")

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
        out._version_counter = self._counter()
        out._origin = note_origin("detach", self) if ANOMALY[0] else "detach"
        if self._is_inference:
            out._is_inference = True
            if not STATE.inference:  # as in PyTorch, such an alias tracks versions again
                out._inference_detached = True
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
        out._origin = note_origin("data", self) if ANOMALY[0] else "data"
        if self._is_inference:
            out._is_inference = True
            if not STATE.inference:  # as with detach(): such an alias tracks versions again
                out._inference_detached = True
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._requires_grad and value._data.dtype.kind not in "fcV":
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        self._data = value._data

    # -- conversion ---------------------------------------------------------------------------
    def numpy(self, *, force: builtins.bool = False) -> np.ndarray:
        """The underlying array (shared, not copied).

        >>> import retrograd as rg
        >>> rg.ones(2).numpy()
        array([1., 1.], dtype=float32)
        """
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if ANOMALY[0]:
            note_round_trip("numpy()", self, self._data)
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._requires_grad:  # as PyTorch: NumPy never silently drops the graph
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        data = self._data
        if dtype is not None and np.dtype(dtype) != data.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
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
        value = self._data.reshape(()).item()
        if ANOMALY[0]:
            note_round_trip("item()", self, value)
        return value

    def tolist(self) -> Any:
        value = self._data.tolist()
        if ANOMALY[0]:
            note_round_trip("tolist()", self, value)
        return value

    def __float__(self) -> builtins.float:
        if self._data.dtype.kind == "c":  # (PyTorch's message: a complex value is no double)
            raise RuntimeError("value cannot be converted to type double without overflow")
        return float(self.item())

    def __complex__(self) -> builtins.complex:
        return builtins.complex(self.item())

    def __int__(self) -> builtins.int:
        return int(self.item())

    def __index__(self) -> builtins.int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> builtins.bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no' if self._data.size == 0 else 'more than one'} "
                               "values is ambiguous" if self._data.size == 0 else
                               "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()).item())

    def __len__(self) -> builtins.int:
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

    def __format__(self, format_spec: str) -> str:
        # PyTorch: a 0-d tensor formats as its number (f"{loss:.4f}"); anything else only with "".
        if self._data.ndim == 0 and type(self) is Tensor:
            return format(self._data.item(), format_spec)
        return object.__format__(self, format_spec)

    __hash__ = object.__hash__

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild, (np.array(self._data), self._requires_grad))

    def __deepcopy__(self, memo: dict[builtins.int, Any]) -> Tensor:
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
        copy = kwargs.get("copy", False)
        flags = [a for a in args if type(a) is builtins.bool]  # (non_blocking, copy) after the target
        if flags:
            args = tuple(a for a in args if type(a) is not builtins.bool)
            if len(flags) > 1:
                copy = flags[1]
        for a in args:
            if isinstance(a, Tensor):
                target = a.dtype
            elif isinstance(a, (str, device)):
                device(a)
            elif a is not None:
                target = a
        if "device" in kwargs and kwargs["device"] is not None:
            device(kwargs["device"])
        np_dtype = self._data.dtype if target is None else to_dtype(target).np
        if np_dtype == self._data.dtype and not copy:
            return self
        return _apply(_E.to_dtype, (self, np_dtype))  # (a copy, as PyTorch's ToCopyBackward0, even to the same dtype)

    def type(self, dtype: Any = None) -> Any:
        if dtype is None:
            return f"torch.{_dtype.scalar_type_name(self._data.dtype)}Tensor"
        return self.to(dtype)

    def cpu(self) -> Tensor:
        return self

    def cuda(self, device: Any = None, non_blocking: builtins.bool = False) -> Tensor:
        raise RuntimeError("retrograd runs on the CPU only: there is no CUDA device (retrograd.cuda.is_available() "
                           "is False)")

    def float(self) -> Tensor:
        return self.to(_dtype.float32)

    def double(self) -> Tensor:
        return self.to(_dtype.float64)

    def half(self) -> Tensor:
        return self.to(_dtype.float16)

    def bfloat16(self) -> Tensor:
        """This tensor as bfloat16 (needs ``ml_dtypes``).

        >>> import retrograd as rg
        >>> rg.tensor([1.1]).bfloat16()
        tensor([1.1016], dtype=torch.bfloat16)
        """
        return self.to(_dtype.load_bfloat16())

    def cfloat(self) -> Tensor:
        """This tensor as complex64 (``rg.tensor([1.]).cfloat()`` is ``tensor([1.+0.j])``)."""
        return self.to(_dtype.complex64)

    def cdouble(self) -> Tensor:
        """This tensor as complex128."""
        return self.to(_dtype.complex128)

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

    def new_tensor(self, data: Any, dtype: Any = None, requires_grad: builtins.bool = False) -> Tensor:
        from .factories import tensor

        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, requires_grad: builtins.bool = False) -> Tensor:
        return _new_filled(self, 0, size, dtype, requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, requires_grad: builtins.bool = False) -> Tensor:
        return _new_filled(self, 1, size, dtype, requires_grad)

    def new_full(self, size: Any, fill_value: Any, dtype: Any = None, requires_grad: builtins.bool = False) -> Tensor:
        if not isinstance(fill_value, (builtins.int, builtins.float, complex, np.number, np.bool_, Tensor)):
            raise TypeError("new_full(): argument 'fill_value' (position 2) must be Number, not "
                            f"{type(fill_value).__name__}")
        return _new_filled(self, fill_value, (size,), dtype, requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, requires_grad: builtins.bool = False) -> Tensor:
        return _new_filled(self, 0, size, dtype, requires_grad)

    def new_empty_strided(self, size: Any, stride: Any, *, dtype: Any = None, device: Any = None,
                          requires_grad: builtins.bool = False) -> Tensor:
        from .factories import empty_strided

        return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype, device=device,
                             requires_grad=requires_grad)

    # -- arithmetic and elementwise math ------------------------------------------------------
    # ``+ - * /`` are the ops' own call paths (``Op.operator``), and most elementwise methods are
    # derived from the op table's entries (ops/variants.py): bound after the class; see the end.
    if TYPE_CHECKING:
        def __add__(self, other: Any) -> Any: ...
        def __radd__(self, other: Any) -> Any: ...
        def __sub__(self, other: Any) -> Any: ...
        def __mul__(self, other: Any) -> Any: ...
        def __rmul__(self, other: Any) -> Any: ...
        def __truediv__(self, other: Any) -> Any: ...
        def __neg__(self) -> Tensor: ...
        def negative(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def absolute(self) -> Tensor: ...
        def neg(self) -> Tensor: ...
        def abs(self) -> Tensor: ...
        def reciprocal(self) -> Tensor: ...
        def exp(self) -> Tensor: ...
        def log(self) -> Tensor: ...
        def sqrt(self) -> Tensor: ...
        def sin(self) -> Tensor: ...
        def cos(self) -> Tensor: ...
        def tanh(self) -> Tensor: ...
        def sigmoid(self) -> Tensor: ...
        def relu(self) -> Tensor: ...
        def sign(self) -> Tensor: ...
        # Derived forms (ops/variants.py) that retrograd's own typed code calls:
        def add(self, other: Any, *, alpha: Any = 1) -> Tensor: ...
        def add_(self, other: Any, *, alpha: Any = 1) -> Tensor: ...
        def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor: ...
        def mul(self, other: Any) -> Tensor: ...
        def mul_(self, other: Any) -> Tensor: ...
        def pow(self, exponent: Any) -> Tensor: ...
        def pow_(self, exponent: Any) -> Tensor: ...
        def remainder(self, other: Any) -> Tensor: ...
        def remainder_(self, other: Any) -> Tensor: ...
        def relu_(self) -> Tensor: ...
        def index_select(self, dim: Any, index: Any) -> Tensor: ...
        def amax(self, dim: Any = (), keepdim: Any = False) -> Tensor: ...
        def amin(self, dim: Any = (), keepdim: Any = False) -> Tensor: ...
        def tril(self, diagonal: Any = 0) -> Tensor: ...
        def clamp(self, min: Any = None, max: Any = None) -> Tensor: ...  # noqa: A002
        def clamp_(self, min: Any = None, max: Any = None) -> Tensor: ...  # noqa: A002
        def t(self) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...

    def __rsub__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented:
            return other
        if isinstance(other, Tensor):
            return _apply(_E.sub, (other, self, 1))
        return _apply(_E.rsub, (self, other, 1))

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
        if type(other) is not Tensor:
            other = _operand(other)
            if other is NotImplemented or not isinstance(other, Tensor):
                return NotImplemented
        if self._data.ndim == 2 and other._data.ndim == 2:  # the common case: straight to mm
            return _ops.linalg.mm.binary(self, other)
        return _ops.linalg.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented or not isinstance(other, Tensor):
            return NotImplemented
        return _ops.linalg.matmul(other, self)


    def __pos__(self) -> Tensor:
        return self


    def __invert__(self) -> Tensor:
        if self._data.dtype.kind == "b":
            return _apply(_E.logical_not, (self,))
        if self._data.dtype.kind in "fV":
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return _apply(_E.bitwise_not, (self,))

    def __and__(self, other: Any) -> Tensor:
        return _bitwise(_E.bitwise_and, self, other)

    __rand__ = __and__

    def __or__(self, other: Any) -> Tensor:
        return _bitwise(_E.bitwise_or, self, other)

    __ror__ = __or__

    def __xor__(self, other: Any) -> Tensor:
        return _bitwise(_E.bitwise_xor, self, other)

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

    # comparisons: builtins.bool tensors, no gradient
    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        other = _operand(other)
        if other is NotImplemented or other is None:
            return False
        return _E.eq.binary(self, other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        other = _operand(other)
        if other is NotImplemented or other is None:
            return True
        return _E.ne.binary(self, other)

    eq = __eq__
    ne = __ne__
    not_equal = __ne__

    def allclose(self, other: Tensor, rtol: builtins.float = 1e-05, atol: builtins.float = 1e-08,
                 equal_nan: builtins.bool = False) -> builtins.bool:
        """``retrograd.allclose(self, other, ...)``: a Python bool.

        >>> import retrograd as rg
        >>> rg.ones(2).allclose(rg.ones(2) + 1e-9)
        True
        """
        from ._functions import allclose

        return allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other: Tensor) -> builtins.bool:
        """``retrograd.equal(self, other)``: same shape and elements, a Python bool.

        >>> import retrograd as rg
        >>> rg.ones(2).equal(rg.ones(2))
        True
        """
        from ._functions import equal

        return equal(self, other)

    def positive(self) -> Tensor:
        """``+self``: the tensor itself, as PyTorch returns it (bool tensors refuse).

        >>> import retrograd as rg
        >>> t = rg.ones(2)
        >>> t.positive() is t
        True
        """
        if self._data.dtype == np.bool_:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def div(self, other: Any, *, rounding_mode: Any = _NO_ROUNDING) -> Tensor:
        if rounding_mode is _NO_ROUNDING:
            return _apply(_E.div, (self, _operand(other)))
        if rounding_mode is None:  # spelled out: PyTorch's rounding_mode overload (DivBackward2)
            return _apply(_E.div_mode_none, (self, _operand(other), None))
        return _ops.extra_div(self, _operand(other), rounding_mode)

    divide = div

    def true_divide(self, other: Any, **kwargs: Any) -> Tensor:
        if kwargs:  # (no rounding_mode here: PyTorch's overloads take ``other`` only)
            raise _no_keywords("true_divide", other, kwargs)
        return self.div(other)

    def where(self, condition: Tensor, other: Any) -> Tensor:
        return _apply(_E.where, (condition, self, _operand(other)))

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        if isinstance(value, Tensor):  # a differentiable value: MaskedFillBackward1
            return _apply(_E.masked_fill_tensor, (self, mask, _zero_dim_value(value, MASKED_FILL_VALUE_ERROR)))
        return _apply(_E.masked_fill, (self, mask, _scalar_value(value)))

    def square(self) -> Tensor:
        x = self.to(_dtype.int64) if self._data.dtype == np.bool_ else self
        return _apply(_E.pow_scalar, (x, 2))

    def square_(self) -> Tensor:
        return _apply_inplace(_E.pow_scalar, (self, 2))

    def float_power(self, exponent: Any) -> Tensor:
        exponent = _operand(exponent)
        wide = _float_power_dtype(self, exponent)
        base = self.to(wide)
        if isinstance(exponent, Tensor):
            return _apply(_E.pow_tensor, (base, exponent.to(wide)))
        return _apply(_E.pow_scalar, (base, complex(exponent) if wide is _dtype.complex128 else float(exponent)))

    def float_power_(self, exponent: Any) -> Tensor:
        exponent = _operand(exponent)
        wide = _float_power_dtype(self, exponent)
        if self._data.dtype != wide.np:
            raise RuntimeError(f"the base given to float_power_ has dtype {_dtype.scalar_type_name(self._data.dtype)} "
                               f"but the operation's result requires dtype {_dtype.scalar_type_name(wide.np)}")
        if isinstance(exponent, Tensor):
            return _apply_inplace(_E.pow_tensor, (self, exponent.to(wide)))
        return _apply_inplace(_E.pow_scalar, (self, complex(exponent) if wide is _dtype.complex128 else float(exponent)))

    def round(self, *, decimals: Any = 0) -> Tensor:
        if decimals == 0:
            return _apply(_E.round_op, (self,))
        return _apply(_E.round_decimals, (self, int(decimals)))

    def frexp(self) -> Any:
        """(mantissa, exponent) with ``self = mantissa * 2 ** exponent`` (PyTorch's named pair).

        >>> import retrograd as rg
        >>> rg.tensor([8.0]).frexp().exponent.tolist()
        [4]
        """
        from .ops.return_types import frexp  # (loaded on first use, as torch.return_types)

        return frexp(*_apply(_E.frexp, (self,)))

    def round_(self, *, decimals: Any = 0) -> Tensor:
        if decimals == 0:
            return _apply_inplace(_E.round_op, (self,))
        return _apply_inplace(_E.round_decimals, (self, int(decimals)))

    def __rmod__(self, other: Any) -> Any:
        other = _operand(other)
        if other is NotImplemented or isinstance(other, Tensor):
            return NotImplemented
        return _apply(_E.remainder_scalar_self, (self, other))

    def __imod__(self, other: Any) -> Tensor:
        return self.remainder_(other)

    def true_divide_(self, other: Any, **kwargs: Any) -> Tensor:
        if kwargs:
            raise _no_keywords("true_divide_", other, kwargs)
        return self.div_(other)

    # -- in-place -----------------------------------------------------------------------------
    def div_(self, other: Any, *, rounding_mode: Any = _NO_ROUNDING) -> Tensor:
        if rounding_mode is _NO_ROUNDING:
            return _apply_inplace(_E.div, (self, _operand(other)))
        if rounding_mode is None:
            return _apply_inplace(_E.div_mode_none, (self, _operand(other), None))
        return _apply_inplace(_E.div_rounding, (self, _operand(other), rounding_mode))

    divide_ = div_

    def zero_(self) -> Tensor:
        return _apply_inplace(_E.zero, (self,))

    def fill_(self, value: Any) -> Tensor:
        if isinstance(value, Tensor):  # a differentiable value: FillBackward3
            return _apply_inplace(_E.fill_tensor, (self, _zero_dim_value(value, FILL_VALUE_ERROR)))
        return _apply_inplace(_E.fill, (self, _scalar_value(value)))

    def copy_(self, src: Any, non_blocking: builtins.bool = False) -> Tensor:
        if not isinstance(src, Tensor):
            src = _as_tensor_like(src, self)
        return _apply_inplace(_E.copy, (self, src))

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        if isinstance(value, Tensor):
            return _apply_inplace(_E.masked_fill_tensor,
                                  (self, mask, _zero_dim_value(value, MASKED_FILL_VALUE_ERROR)))
        return _apply_inplace(_E.masked_fill, (self, mask, _scalar_value(value)))

    # -- reductions ---------------------------------------------------------------------------
    def sum(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        if dim is None and dtype is None:
            return _R.sum_all.unary(self, None)  # type: ignore[no-any-return]  # (``apply`` would pick it)
        np_dtype = to_dtype(dtype).np if dtype is not None else None
        if dim is None:
            return _apply(_R.sum_all, (self, np_dtype))
        return _apply(_R.sum_dim, (self, _R.normalize_dims(dim, self._data.ndim), keepdim, np_dtype))

    def mean(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        if dtype is not None and to_dtype(dtype).np.kind not in "fcV":  # PyTorch names the argument
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating "
                               f"point or complex dtype. Got: {_dtype.scalar_type_name(to_dtype(dtype).np)}")
        x = self if dtype is None else self.to(dtype)
        if dim is None:
            return _apply(_R.mean_all, (x,))
        return _apply(_R.mean_dim, (x, _R.normalize_dims(dim, self._data.ndim), keepdim))

    def max(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        if dim is None:
            return _apply(_R.max_all, (self,))
        if isinstance(dim, Tensor):
            return _ops.maximum(self, dim)
        values, indices = _apply(_R.max_dim, (self, _R.normalize_dim(dim, self._data.ndim), keepdim))
        return _ops.return_types.max(values, indices)

    def min(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        if dim is None:
            return _apply(_R.min_all, (self,))
        if isinstance(dim, Tensor):
            return _ops.minimum(self, dim)
        values, indices = _apply(_R.min_dim, (self, _R.normalize_dim(dim, self._data.ndim), keepdim))
        return _ops.return_types.min(values, indices)

    def argmax(self, dim: builtins.int | None = None, keepdim: builtins.bool = False) -> Tensor:
        d = None if dim is None else _R.normalize_dim(dim, self._data.ndim)
        return _apply(_R.argmax, (self, d, keepdim))

    def argmin(self, dim: builtins.int | None = None, keepdim: builtins.bool = False) -> Tensor:
        d = None if dim is None else _R.normalize_dim(dim, self._data.ndim)
        return _apply(_R.argmin, (self, d, keepdim))

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: builtins.bool = False, dtype: Any = None) -> Tensor:
        ord_ = _R.norm_order(p, dim)
        dims = _R.normalize_dims(dim, self._data.ndim)
        if dtype is not None:
            return _apply(_R.vector_norm_dtype, (self, ord_, dims, keepdim, _R.norm_dtype(self, dtype)))
        return _apply(_R.vector_norm, (self, ord_, dims, keepdim))

    def sum_to_size(self, *size: Any) -> Tensor:
        shape = _sizes(size)
        if shape == self._data.shape:
            return self
        if self._requires_grad and STATE.grad_enabled:  # (a graph is recorded: PyTorch's nodes)
            return _R.sum_to_recorded(self, shape)
        return _R.sum_to_size.unary(self, shape)  # type: ignore[no-any-return]  # (``apply`` would pick it)

    def prod(self, dim: Any = None, keepdim: Any = False, *, dtype: Any = None) -> Tensor:
        np_dtype = to_dtype(dtype).np if dtype is not None else None
        if dim is None:
            return _apply(_R.prod_all, (self, np_dtype))
        return _apply(_R.prod_dim, (self, _R.normalize_dim(dim, self._data.ndim), keepdim, np_dtype))

    def _var_args(self, dim: Any, unbiased: Any, keepdim: Any, correction: Any) -> tuple[Any, ...]:
        if isinstance(dim, bool):  # var(unbiased)
            dim, unbiased = None, dim
        if unbiased is not None and correction is not None:
            raise TypeError("var() received an invalid combination of arguments - got both 'unbiased' and "
                            "'correction'; pass only one of them")
        if correction is None:
            correction = 0 if unbiased is False else 1
        return self, _R.normalize_dims(dim, self._data.ndim), correction, keepdim

    def var(self, dim: Any = None, unbiased: Any = None, keepdim: Any = False, *, correction: Any = None) -> Tensor:
        return _apply(_R.var, self._var_args(dim, unbiased, keepdim, correction))

    def std(self, dim: Any = None, unbiased: Any = None, keepdim: Any = False, *, correction: Any = None) -> Tensor:
        return _apply(_R.std, self._var_args(dim, unbiased, keepdim, correction))

    def sort(self, dim: Any = -1, descending: Any = False, *, stable: Any = None) -> Any:
        d = _R.normalize_dim(dim, self._data.ndim)
        if stable is None:
            values, indices = _apply(_R.sort, (self, d, bool(descending)))
        else:
            values, indices = _apply(_R.sort_stable, (self, d, bool(descending), bool(stable)))
        return _ops.return_types.sort(values, indices)

    def argsort(self, dim: Any = -1, descending: Any = False, *, stable: Any = False) -> Tensor:
        return _apply(_R.argsort, (self, _R.normalize_dim(dim, self._data.ndim), bool(descending)))

    def msort(self) -> Tensor:
        return self.sort(0).values

    def topk(self, k: Any, dim: Any = -1, largest: Any = True, sorted: Any = True) -> Any:  # noqa: A002
        d = _R.normalize_dim(dim, self._data.ndim)
        values, indices = _apply(_R.topk, (self, int(k), d, bool(largest), bool(sorted)))
        return _ops.return_types.topk(values, indices)

    def kthvalue(self, k: Any, dim: Any = -1, keepdim: Any = False) -> Any:
        d = _R.normalize_dim(dim, self._data.ndim)
        values, indices = _apply(_R.kthvalue, (self, int(k), d, keepdim))
        return _ops.return_types.kthvalue(values, indices)

    def median(self, dim: Any = None, keepdim: Any = False) -> Any:
        if dim is None:
            return _apply(_R.median_all, (self,))
        values, indices = _apply(_R.median_dim, (self, _R.normalize_dim(dim, self._data.ndim), keepdim))
        return _ops.return_types.median(values, indices)

    def nanmedian(self, dim: Any = None, keepdim: Any = False) -> Any:
        if dim is None:
            return _apply(_R.nanmedian_all, (self,))
        values, indices = _apply(_R.nanmedian_dim, (self, _R.normalize_dim(dim, self._data.ndim), keepdim))
        return _ops.return_types.nanmedian(values, indices)

    def mode(self, dim: Any = -1, keepdim: Any = False) -> Any:
        values, indices = _apply(_R.mode, (self, _R.normalize_dim(dim, self._data.ndim), keepdim))
        return _ops.return_types.mode(values, indices)

    def cumsum(self, dim: Any, *, dtype: Any = None) -> Tensor:
        np_dtype = to_dtype(dtype).np if dtype is not None else None
        return _apply(_R.cumsum, (self, _R.normalize_dim(dim, self._data.ndim), np_dtype))

    def cumsum_(self, dim: Any, *, dtype: Any = None) -> Tensor:
        np_dtype = to_dtype(dtype).np if dtype is not None else None
        _E.check_inplace_dtype(self, np_dtype)
        return _apply_inplace(_R.cumsum, (self, _R.normalize_dim(dim, self._data.ndim), np_dtype))

    def cumprod(self, dim: Any, *, dtype: Any = None) -> Tensor:
        np_dtype = to_dtype(dtype).np if dtype is not None else None
        return _apply(_R.cumprod, (self, _R.normalize_dim(dim, self._data.ndim), np_dtype))

    def cumprod_(self, dim: Any, *, dtype: Any = None) -> Tensor:
        np_dtype = to_dtype(dtype).np if dtype is not None else None
        _E.check_inplace_dtype(self, np_dtype)
        return _apply_inplace(_R.cumprod, (self, _R.normalize_dim(dim, self._data.ndim), np_dtype))

    def nansum(self, dim: Any = None, keepdim: Any = False, *, dtype: Any = None) -> Tensor:
        np_dtype = to_dtype(dtype).np if dtype is not None else None
        return _apply(_R.nansum, (self, _R.normalize_dims(dim, self._data.ndim), keepdim, np_dtype))

    def nanmean(self, dim: Any = None, keepdim: Any = False, *, dtype: Any = None) -> Tensor:
        x = self if dtype is None else self.to(dtype)
        if x._data.dtype.kind not in "fcV":
            raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                               f"{_dtype.scalar_type_name(x._data.dtype)}")
        dims = _R.normalize_dims(dim, self._data.ndim)
        count = _apply(_R.sum_dim, (Tensor._make(~np.isnan(x._data)), dims, keepdim, None))
        return x.nansum(dim, keepdim) / count

    def aminmax(self, *, dim: Any = None, keepdim: Any = False) -> Any:
        d = None if dim is None else _R.normalize_dim(dim, self._data.ndim)
        lo, hi = _apply(_R.aminmax, (self, d, bool(keepdim)))
        return _ops.return_types.aminmax(lo, hi)

    def cummax(self, dim: Any) -> Any:
        values, indices = _apply(_R.cummax, (self, _R.normalize_dim(dim, self._data.ndim)))
        return _ops.return_types.cummax(values, indices)

    def cummin(self, dim: Any) -> Any:
        values, indices = _apply(_R.cummin, (self, _R.normalize_dim(dim, self._data.ndim)))
        return _ops.return_types.cummin(values, indices)

    def bincount(self, weights: Any = None, minlength: Any = 0) -> Tensor:
        if weights is None:
            return _apply(_R.bincount_op, (self, int(minlength)))
        return _apply(_R.bincount_weighted, (self, weights, int(minlength)))

    def histogram(self, bins: Any, *, range: Any = None, weight: Any = None, density: Any = False) -> Any:  # noqa: A002
        edges = bins._data if isinstance(bins, Tensor) else int(bins)
        hist, bin_edges = _R._histogram(self._data, edges, None if weight is None else weight._data,
                                        bool(density), range)
        return _ops.return_types.histogram(Tensor._make(hist), Tensor._make(bin_edges))

    def unique(self, sorted: Any = True, return_inverse: Any = False, return_counts: Any = False,  # noqa: A002
               dim: Any = None) -> Any:
        if dim is None:
            outputs = _apply(_R.unique2, (self,))
        else:
            if self._data.ndim == 0:
                raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
            outputs = _apply(_R.unique_dim, (self, _R.normalize_dim(dim, self._data.ndim)))
        return _R.unique_outputs(outputs, return_inverse, return_counts)

    def unique_consecutive(self, return_inverse: Any = False, return_counts: Any = False, dim: Any = None) -> Any:
        if dim is not None and self._data.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = None if dim is None else _R.normalize_dim(dim, self._data.ndim)
        return _R.unique_outputs(_apply(_R.unique_consecutive_op, (self, d)), return_inverse, return_counts)

    def diff(self, n: Any = 1, dim: Any = -1, prepend: Any = None, append: Any = None) -> Tensor:
        return _R.diff(self, int(n), dim, prepend, append)

    def cov(self, *, correction: Any = 1, fweights: Any = None, aweights: Any = None) -> Tensor:
        return _R.cov(self, int(correction), fweights, aweights)

    def corrcoef(self) -> Tensor:
        return _R.corrcoef(self)

    def quantile(self, q: Any, dim: Any = None, keepdim: Any = False, *, interpolation: Any = "linear") -> Tensor:
        return _R.quantile(self, q, dim, bool(keepdim), interpolation=interpolation)

    def nanquantile(self, q: Any, dim: Any = None, keepdim: Any = False, *, interpolation: Any = "linear") -> Tensor:
        return _R.quantile(self, q, dim, bool(keepdim), interpolation=interpolation, ignore_nan=True)

    # -- shape and indexing -------------------------------------------------------------------
    def view(self, *shape: Any, **kwargs: Any) -> Tensor:
        if kwargs or (shape and isinstance(shape[0], (dtype, type))):
            return _view_dtype(self, shape, kwargs)
        return _S.view.unary(self, _sizes(shape))  # type: ignore[no-any-return]  # (``apply`` would pick it)

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(other._data.shape)

    def reshape(self, *shape: Any) -> Tensor:
        target = _sizes(shape)
        # (A contiguous array always takes a valid shape as a view; ``view`` checks the shape. A
        # NumPy scalar some paths leave as ``_data`` has no view to reshape: ``can_view`` says so.)
        data = self._data
        contiguous = data.flags.c_contiguous
        if (contiguous and type(data) is np.ndarray) or _S.can_view(data, target):
            # (a non-contiguous one: PyTorch's ``_reshape_alias``, a view op with a node of its own)
            return (_S.view if contiguous else _S.reshape_alias).unary(self, target)  # type: ignore[no-any-return]
        return _apply(_S.unsafe_view, (_apply(_E.clone, (self,)), target))  # PyTorch: clone, then _unsafe_view

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other._data.shape)

    def flatten(self, start_dim: builtins.int = 0, end_dim: builtins.int = -1) -> Tensor:
        ndim = self._data.ndim
        if ndim == 0:
            _R.normalize_dim(start_dim, 0), _R.normalize_dim(end_dim, 0)  # (PyTorch's IndexError for flatten(1))
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
        return self.contiguous().view(-1)

    def transpose(self, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        ndim = self._data.ndim
        if not (type(dim0) is builtins.int and type(dim1) is builtins.int and 0 <= dim0 < ndim and 0 <= dim1 < ndim):
            dim0, dim1 = _R.normalize_dim(dim0, ndim), _R.normalize_dim(dim1, ndim)
        return _S.transpose.unary(self, dim0, dim1)  # type: ignore[no-any-return]

    swapaxes = transpose
    swapdims = transpose

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
        order = _sizes(dims)
        if len(order) != ndim:
            raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                               f"of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to "
                               f"len(dims) = {len(order)}")
        if order and (min(order) < 0 or max(order) >= ndim):  # (dims in range pass as they are)
            order = tuple(_R.normalize_dim(d, ndim) for d in order)
        return _S.permute.unary(self, order)  # type: ignore[no-any-return]

    def squeeze(self, dim: Any = None) -> Tensor:
        ndim = self._data.ndim
        if dim is None:
            return _apply(_S.squeeze_all, (self,))
        if isinstance(dim, (tuple, list)):
            return _apply(_S.squeeze_dims, (self, tuple(_R.normalize_dim(d, ndim) for d in dim)))
        if not (type(dim) is builtins.int and 0 <= dim < ndim):
            dim = _R.normalize_dim(dim, ndim)
        return _S.squeeze_dim.unary(self, (dim,))  # type: ignore[no-any-return]

    def unsqueeze(self, dim: builtins.int) -> Tensor:
        if not (type(dim) is builtins.int and 0 <= dim <= self._data.ndim):
            dim = _R.normalize_dim(dim, self._data.ndim + 1)
        return _S.unsqueeze.unary(self, dim)  # type: ignore[no-any-return]

    def expand(self, *sizes: Any) -> Tensor:
        return _S.expand.unary(self, _sizes(sizes))  # type: ignore[no-any-return]

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other._data.shape)

    def select(self, dim: builtins.int, index: builtins.int) -> Tensor:
        ndim = self._data.ndim
        if ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        if type(dim) is not builtins.int or type(index) is not builtins.int:
            _select_arguments(dim, index)
        d = _R.normalize_dim(dim, ndim)
        index = builtins.int(index)
        size = self._data.shape[d]
        if not -size <= index < size:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self._data.shape)} at "
                             f"dimension {d}")
        return _apply(_S.select, (self, d, index % size))

    def narrow(self, dim: builtins.int, start: builtins.int, length: builtins.int) -> Tensor:
        if not self._data.ndim:
            raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
        d = _R.normalize_dim(dim, self._data.ndim)
        size = self._data.shape[d]
        start = int(start)
        if start < 0:
            start += size
        if not 0 <= start <= size or length < 0 or start + length > size:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
        return _apply(_S.slice_op, (self, d, start, start + int(length), 1))

    def unbind(self, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        return tuple(_apply(_S.unbind, (self, _R.normalize_dim(dim, self._data.ndim))))

    def gather(self, dim: builtins.int, index: Any, *, sparse_grad: builtins.bool = False) -> Tensor:
        return _apply(_S.gather, (self, _R.normalize_dim(dim, self._data.ndim), _S.versioned_index(index)))

    def scatter(self, dim: builtins.int, index: Any, src: Any = None, *, value: Any = None, reduce: Any = None) -> Tensor:
        op, args = _S.scatter_args(self, dim, index, src, value, reduce)
        return _apply(op, args)

    def scatter_add(self, dim: builtins.int, index: Any, src: Tensor) -> Tensor:
        if not isinstance(src, Tensor):
            raise TypeError(f"scatter_add(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}")
        return _apply(_S.scatter_add, (self, src, _R.normalize_dim(dim, self._data.ndim), _S.versioned_index(index)))

    def __getitem__(self, key: Any) -> Tensor:
        return _ops.indexing.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        _ops.indexing.setitem(self, key, value)

    def flip(self, *dims: Any, **kwargs: Any) -> Tensor:
        dims = _sizes(dims) if dims else _sizes((kwargs.pop("dims"),))
        return _apply(_S.flip, (self, _S.normalize_dim_list(dims, self._data.ndim)))

    def fliplr(self) -> Tensor:
        if self._data.ndim < 2:
            raise RuntimeError("Input must be >= 2-d.")
        return self.flip(1)

    def flipud(self) -> Tensor:
        if self._data.ndim < 1:
            raise RuntimeError("Input must be >= 1-d.")
        return self.flip(0)

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        shift_list = (int(shifts),) if isinstance(shifts, (int, np.integer)) else tuple(int(s) for s in shifts)
        dim_list = () if dims is None else (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
        if not shift_list:
            raise RuntimeError("`shifts` required")
        if not dim_list:  # (``dims=()`` is no dims, as PyTorch's: one shift of the flattened tensor)
            if len(shift_list) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shift_list)}, dims:0")
            return _apply(_S.roll, (self, shift_list, None))
        if not self._data.ndim:
            raise IndexError(f"Dimension specified as {dim_list[0]} but tensor has no dimensions")
        if len(shift_list) != len(dim_list):
            raise RuntimeError(
                f"shifts and dimensions must align. shifts: {len(shift_list)}, dims:{len(dim_list)}"
            )
        ndim = self._data.ndim
        return _apply(_S.roll, (self, shift_list, tuple(_R.normalize_dim(int(d), ndim) for d in dim_list)))

    def repeat(self, *sizes: Any) -> Tensor:
        return _apply(_S.repeat, (self, _sizes(sizes)))

    def tile(self, *dims: Any, **kwargs: Any) -> Tensor:
        reps = _sizes(dims) if dims else _sizes((kwargs.pop("dims"),))
        return self.repeat((1,) * (self._data.ndim - len(reps)) + reps)

    def repeat_interleave(self, repeats: Any, dim: Any = None, *, output_size: Any = None) -> Tensor:
        return _S.repeat_interleave(self, repeats, dim, output_size)

    def movedim(self, source: Any, destination: Any) -> Tensor:
        return _S.movedim(self, source, destination)

    moveaxis = movedim

    def unflatten(self, dim: Any, sizes: Any) -> Tensor:
        return _S.unflatten(self, dim, sizes)

    def split(self, split_size: Any = None, dim: Any = 0, *, split_size_or_sections: Any = None) -> tuple[Tensor, ...]:
        if split_size is None:  # ``torch.split``'s keyword
            split_size = split_size_or_sections
        if not self._data.ndim:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        d = _R.normalize_dim(dim, self._data.ndim)
        if isinstance(split_size, (int, np.integer)):
            return tuple(_apply(_S.split, (self, int(split_size), d)))
        return tuple(_apply(_S.split_with_sizes, (self, tuple(int(s) for s in split_size), d)))

    def split_with_sizes(self, split_sizes: Any, dim: Any = 0) -> tuple[Tensor, ...]:
        d = _R.normalize_dim(dim, self._data.ndim)
        return tuple(_apply(_S.split_with_sizes, (self, tuple(int(s) for s in split_sizes), d)))

    def chunk(self, chunks: Any, dim: Any = 0) -> tuple[Tensor, ...]:
        return _S.chunk(self, int(chunks), dim)

    def tensor_split(self, indices_or_sections: Any, dim: Any = 0) -> tuple[Tensor, ...]:
        return _S.tensor_split(self, indices_or_sections, dim)

    def _split_along(self, name: str, dim: Any, min_dims: Any, spec: Any) -> tuple[Tensor, ...]:
        ndim = self._data.ndim
        if ndim < min_dims:
            raise RuntimeError(
                f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor with {ndim} "
                "dimensions!"
            )
        if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
            size = self._data.shape[dim]
            if spec == 0 or size % int(spec):
                raise RuntimeError(
                    f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension {size} is "
                    f"not divisible by the split_size {spec}!"
                )
        return _S.tensor_split(self, spec, dim)

    def hsplit(self, indices_or_sections: Any) -> tuple[Tensor, ...]:
        return self._split_along("hsplit", 1 if self._data.ndim > 1 else 0, 1, indices_or_sections)

    def vsplit(self, indices_or_sections: Any) -> tuple[Tensor, ...]:
        return self._split_along("vsplit", 0, 2, indices_or_sections)

    def dsplit(self, indices_or_sections: Any) -> tuple[Tensor, ...]:
        return self._split_along("dsplit", 2, 3, indices_or_sections)

    def index_add(self, dim: Any, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
        d = _R.normalize_dim(dim, self._data.ndim)
        return _apply(_S.index_add, (self, source, d, _S.versioned_index(index), alpha))

    def index_add_(self, dim: Any, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
        d = _R.normalize_dim(dim, self._data.ndim)
        return _apply_inplace(_S.index_add, (self, source, d, _S.versioned_index(index), alpha))

    def take_along_dim(self, indices: Tensor, dim: Any = None) -> Tensor:
        return _S.take_along_dim(self, indices, dim)

    def nonzero(self, *, as_tuple: Any = False) -> Any:
        data = self._data
        if as_tuple:
            return tuple(Tensor._make(i.astype(np.int64)) for i in np.nonzero(np.atleast_1d(data)))
        return Tensor._make(np.argwhere(data).astype(np.int64))

    def argwhere(self) -> Tensor:
        return self.nonzero()

    def broadcast_to(self, size: Any) -> Tensor:
        return self.expand(_sizes((size,)))

    def scatter_(self, dim: Any, index: Tensor, src: Any = None, *, value: Any = None, reduce: Any = None) -> Tensor:
        op, args = _S.scatter_args(self, dim, index, src, value, reduce)
        return _apply_inplace(op, args)

    def diagflat(self, offset: Any = 0) -> Tensor:
        return _S.diagflat(self, offset)

    def unsafe_chunk(self, chunks: Any, dim: Any = 0) -> tuple[Tensor, ...]:
        return _S.unsafe_chunk(self, chunks, dim)

    def fill_diagonal_(self, fill_value: Any, wrap: builtins.bool = False) -> Tensor:
        return _S.fill_diagonal_(self, fill_value, wrap)

    def adjoint(self) -> Tensor:
        return _S.adjoint(self, "tensor.adjoint()")

    @property
    def mH(self) -> Tensor:
        return _S.adjoint(self, "tensor.mH")

    @property
    def H(self) -> Tensor:
        ndim = self._data.ndim
        if ndim == 0:
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
            return self
        if ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D tensor."
                               + (" For batches of matrices, consider using tensor.mH" if ndim > 2 else ""))
        return _S.adjoint(self, "tensor.H")

    def scatter_add_(self, dim: Any, index: Tensor, src: Tensor) -> Tensor:
        if not isinstance(src, Tensor):
            raise TypeError(f"scatter_add_(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}")
        d = _R.normalize_dim(dim, self._data.ndim)
        return _apply_inplace(_S.scatter_add, (self, src, d, _S.versioned_index(index)))

    def index_put(self, indices: Any, values: Tensor, accumulate: Any = False) -> Tensor:
        key = _ops.indexing.index_put_key(self, indices)
        return _apply(_S.index_put, (self, _ops.indexing.index_put_values(self, values, key), key, bool(accumulate)))

    def index_put_(self, indices: Any, values: Tensor, accumulate: Any = False) -> Tensor:
        key = _ops.indexing.index_put_key(self, indices)
        return _apply_inplace(_S.index_put, (self, _ops.indexing.index_put_values(self, values, key), key,
                                             bool(accumulate)))

    def nonzero_static(self, *, size: Any, fill_value: Any = -1) -> Tensor:
        return _ops.indexing.nonzero_static(self, int(size), int(fill_value))

    # -- linear algebra and nn ----------------------------------------------------------------
    def matmul(self, other: Tensor) -> Tensor:
        return _ops.linalg.matmul(self, other)

    def mm(self, mat2: Tensor) -> Tensor:
        return _ops.linalg.mm.binary(self, mat2)

    def mv(self, vec: Tensor) -> Tensor:
        return _ops.linalg.mv.binary(self, vec)

    def dot(self, other: Tensor) -> Tensor:
        return _ops.linalg.dot.binary(self, other)

    def bmm(self, mat2: Tensor) -> Tensor:
        return _ops.linalg.bmm.binary(self, mat2)

    def softmax(self, dim: builtins.int, dtype: Any = None) -> Tensor:
        x = self if dtype is None else self.to(dtype)
        return _apply(_ops.nn.softmax, (x, _R.normalize_dim(dim, self._data.ndim)))

    def log_softmax(self, dim: builtins.int, dtype: Any = None) -> Tensor:
        x = self if dtype is None else self.to(dtype)
        return _apply(_ops.nn.log_softmax, (x, _R.normalize_dim(dim, self._data.ndim)))

    def diagonal(self, offset: Any = 0, dim1: Any = 0, dim2: Any = 1) -> Tensor:
        d1, d2 = _S._check_diagonal_dims(self._data.ndim, dim1, dim2)
        return _apply(_S.diagonal, (self, int(offset), d1, d2))

    def diag(self, diagonal: Any = 0) -> Tensor:
        ndim = self._data.ndim
        if ndim == 1:
            return _apply(_S.diag_embed, (self, int(diagonal), 0, 1))
        if ndim != 2:
            raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")
        return _apply(_S.diagonal_copy, (self, int(diagonal), 0, 1))

    def diag_embed(self, offset: Any = 0, dim1: Any = -2, dim2: Any = -1) -> Tensor:
        d1, d2 = _S._check_diagonal_dims(self._data.ndim + 1, dim1, dim2)
        return _apply(_S.diag_embed, (self, int(offset), d1, d2))

    def trace(self) -> Tensor:
        return _apply(_ops.linalg.trace, (self,))

    def vdot(self, other: Tensor) -> Tensor:
        return _apply(_ops.linalg.vdot, (self, other))

    def outer(self, vec2: Tensor) -> Tensor:
        return _ops.linalg.outer(self, vec2)

    ger = outer

    def inner(self, other: Tensor) -> Tensor:
        return _ops.linalg.inner(self, other)

    def kron(self, other: Tensor) -> Tensor:
        return _ops.linalg.kron(self, other)

    def addmm(self, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _apply(_ops.linalg.addmm, (self, mat1, mat2, beta, alpha))

    def addmv(self, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _apply(_ops.linalg.addmv, (self, mat, vec, beta, alpha))

    def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _apply(_ops.linalg.baddbmm, (self, batch1, batch2, beta, alpha))

    def addmm_(self, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _apply_inplace(_ops.linalg.addmm, (self, mat1, mat2, beta, alpha))

    def inverse(self) -> Tensor:
        return _apply(_ops.linalg.inv, (self,))

    def det(self) -> Tensor:
        return _apply(_ops.linalg.det, (self,))

    def logdet(self) -> Tensor:
        return _ops.linalg.logdet(self)

    def slogdet(self) -> Any:
        return _ops.linalg.slogdet(self, "slogdet")

    def cholesky(self, upper: Any = False) -> Tensor:
        return _ops.linalg.cholesky(self, upper, legacy=True)

    def svd(self, some: Any = True, compute_uv: Any = True) -> Any:
        return _ops.linalg.svd_legacy(self, some, compute_uv)

    def matrix_power(self, n: Any) -> Tensor:
        return _ops.linalg.matrix_power(self, n)

    def addr(self, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _apply(_ops.linalg.addr, (self, vec1, vec2, beta, alpha))

    def addr_(self, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        if self._data.ndim != 2:
            raise RuntimeError(f"2D tensor expected, got {self._data.ndim}D tensor for input")
        sizes = [list(t.shape) for t in (vec1, vec2)]
        if sizes[0] + sizes[1] != list(self._data.shape):
            raise RuntimeError(f"size mismatch, input: {list(self._data.shape)}, v1: {sizes[0]}, v2: {sizes[1]}")
        return _apply_inplace(_ops.linalg.addr, (self, vec1, vec2, beta, alpha))

    def addbmm(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _apply(_ops.linalg.addbmm, (self, batch1, batch2, beta, alpha))

    def addbmm_(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _ops.linalg.inplace_product(_ops.linalg.addbmm, self, (batch1, batch2, beta, alpha))

    def addmv_(self, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _ops.linalg.inplace_product(_ops.linalg.addmv, self, (mat, vec, beta, alpha))

    def baddbmm_(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _ops.linalg.inplace_product(_ops.linalg.baddbmm, self, (batch1, batch2, beta, alpha))

    def cross(self, other: Tensor, dim: Any = None) -> Tensor:
        return _ops.linalg.cross(self, other, dim)

    def pinverse(self, rcond: builtins.float = 1e-15) -> Tensor:
        return _apply(_ops.linalg.pinverse_op, (self, rcond))

    def matrix_exp(self) -> Tensor:
        return _apply(_ops.linalg.matrix_exp_op, (self,))

    def narrow_copy(self, dim: builtins.int, start: builtins.int, length: builtins.int) -> Tensor:
        from ._view_copies import narrow_copy

        return narrow_copy(self, dim, start, length)

    def geqrf(self) -> Any:
        from .ops.householder import geqrf

        return geqrf(self)

    def orgqr(self, input2: Tensor) -> Tensor:
        from .ops.householder import householder_product

        return householder_product(self, input2)

    def ormqr(self, input2: Tensor, input3: Tensor, left: builtins.bool = True,
              transpose: builtins.bool = False) -> Tensor:
        from .ops.householder import ormqr

        return ormqr(self, input2, input3, left, transpose)

    def stft(self, n_fft: builtins.int, hop_length: builtins.int | None = None, win_length: builtins.int | None = None,
             window: Tensor | None = None, center: builtins.bool = True, pad_mode: str = "reflect",
             normalized: builtins.bool = False, onesided: builtins.bool | None = None, return_complex: builtins.bool | None = None,
             align_to_window: builtins.bool | None = None) -> Tensor:
        from ._spectral import stft

        return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                    return_complex, align_to_window)

    def istft(self, n_fft: builtins.int, hop_length: builtins.int | None = None, win_length: builtins.int | None = None,
              window: Tensor | None = None, center: builtins.bool = True, normalized: builtins.bool = False,
              onesided: builtins.bool | None = None, length: builtins.int | None = None, return_complex: builtins.bool = False) -> Tensor:
        from ._spectral import istft

        return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                     return_complex)

    def hardshrink(self, lambd: builtins.float = 0.5) -> Tensor:
        return _apply(_ops.nn.hardshrink, (self, lambd))

    def prelu(self, weight: Tensor) -> Tensor:
        return _ops.nn.prelu(self, weight)  # type: ignore[no-any-return]

    # -- random samplers (PyTorch's CPU stream: retrograd._sampling) ----------------------------
    def uniform_(self, from_: builtins.float = 0.0, to: builtins.float = 1.0, *, generator: Any = None,
                 **kwargs: Any) -> Tensor:
        from ._sampling import uniform_

        return uniform_(self, kwargs.pop("from", from_), to, generator=generator, **kwargs)

    def normal_(self, mean: builtins.float = 0.0, std: builtins.float = 1.0, *, generator: Any = None) -> Tensor:
        from ._sampling import normal_

        return normal_(self, mean, std, generator=generator)

    def random_(self, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
        from ._sampling import random_

        return random_(self, *args, generator=generator, **kwargs)

    def exponential_(self, lambd: builtins.float = 1.0, *, generator: Any = None) -> Tensor:
        from ._sampling import exponential_

        return exponential_(self, lambd, generator=generator)

    def geometric_(self, p: builtins.float, *, generator: Any = None) -> Tensor:
        from ._sampling import geometric_

        return geometric_(self, p, generator=generator)

    def log_normal_(self, mean: builtins.float = 1.0, std: builtins.float = 2.0, *, generator: Any = None) -> Tensor:
        from ._sampling import log_normal_

        return log_normal_(self, mean, std, generator=generator)

    def cauchy_(self, median: builtins.float = 0.0, sigma: builtins.float = 1.0, *, generator: Any = None) -> Tensor:
        from ._sampling import cauchy_

        return cauchy_(self, median, sigma, generator=generator)

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        from ._sampling import bernoulli_

        return bernoulli_(self, p, generator=generator)

    def bernoulli(self, p: Any = None, *, generator: Any = None) -> Tensor:
        from ._sampling import bernoulli

        return bernoulli(self, p, generator=generator)

    def multinomial(self, num_samples: builtins.int, replacement: builtins.bool = False, *,
                    generator: Any = None) -> Tensor:
        from ._sampling import multinomial

        return multinomial(self, num_samples, replacement, generator=generator)


def _rebuild(data: np.ndarray, requires_grad: bool) -> Tensor:
    return Tensor._make(data, requires_grad)


MASKED_FILL_VALUE_ERROR = ("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} "
                           "dimension(s).")
FILL_VALUE_ERROR = "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions."


def _zero_dim_value(value: Tensor, message: str) -> Tensor:
    """A fill value given as a tensor: it must be 0-d (PyTorch's message), and stays a tensor so
    that a value that requires grad receives its gradient."""
    if value._data.ndim != 0:
        raise RuntimeError(message.format(value._data.ndim))
    return value


def _scalar_value(value: Any) -> Any:
    if isinstance(value, Tensor):
        return _zero_dim_value(value, MASKED_FILL_VALUE_ERROR)._data.item()
    return value.item() if isinstance(value, np.generic) else value


def _as_tensor_like(value: Any, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    arr = np.asarray(value)
    if arr.dtype.kind in "fV" and not isinstance(value, np.ndarray):
        arr = arr.astype(like._data.dtype if like._data.dtype.kind in "fV" else get_default_dtype().np)
    elif arr.dtype.kind in "iu" and not isinstance(value, np.ndarray):
        arr = arr.astype(np.int64)
    elif arr.dtype == object and type(value) is int:  # beyond int64: PyTorch's error, not a NumPy object array
        raise OverflowError("int too big to convert")
    return Tensor._make(arr)


def _new_filled(like: Tensor, value: Any, size: Any, dtype: Any, requires_grad: bool) -> Tensor:
    np_dtype = to_dtype(dtype).np if dtype is not None else like._data.dtype
    shape = _sizes(size)
    for n in shape:  # PyTorch's error, not NumPy's ValueError
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(shape)}")
    t = Tensor._make(np.full(shape, value, dtype=np_dtype))
    if requires_grad:
        t.requires_grad_()
    return t


# The op table imports Tensor, so it is bound here, after the class exists.
def _bitwise(op: Any, a: Tensor, b: Any) -> Tensor:
    """A bitwise op, with PyTorch's error when the operands promote to a floating dtype."""
    b = _operand(b)
    try:
        return _apply(op, (a, b))  # type: ignore[no-any-return]
    except TypeError:
        promoted = _dtype.result_type((a, b))
        if promoted.kind in "fV":
            raise NotImplementedError(
                f'"{op.name}_cpu" not implemented for {_dtype.scalar_type_name(promoted)!r}') from None
        raise


from . import ops as _ops  # noqa: E402
from .ops import complex as _Cx  # noqa: E402
from .ops import elementwise as _E  # noqa: E402
from .ops import reduce as _R  # noqa: E402
from .ops import shape as _S  # noqa: E402
from .ops import variants as _variants  # noqa: E402
from .ops.inplace import apply_inplace as _apply_inplace  # noqa: E402
from .ops.op import apply as _apply  # noqa: E402

if TYPE_CHECKING:  # loaded on first use (``ops.__getattr__``); named here for the type checker
    from .ops import nn as _ops_nn  # noqa: F401

# The one binding point of the op table's declared public forms (methods, in-place methods and
# operators; the functions are bound in ``_functions.py``): see ops/variants.py. The arithmetic
# operators and the hot one-input methods are the ops' own call paths, one frame shorter than a
# method delegating to them; an operator's other operand is coerced by ``_operand`` (a Python
# number or NumPy value; anything else is NotImplemented). Each, these too, is made on first lookup.
_variants.bind_methods(Tensor, _variants.declared(), _operand)


# ---- the porting surface: storage queries and legacy methods ported programs call ----------------
# (plain functions set on the class, so the class body and the op table stay as they are)

def _data_ptr(self: Tensor) -> builtins.int:
    """The address of the tensor's first element.

    >>> import retrograd as rg
    >>> x = rg.arange(4.0); x[1].data_ptr() - x.data_ptr()
    4
    """
    return self._data.__array_interface__["data"][0]  # type: ignore[no-any-return]


def _new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """Legacy constructor: uninitialised of a size, or from data, with this tensor's dtype.

    >>> import retrograd as rg
    >>> rg.ones(1, dtype=rg.int64).new([1.5])
    tensor([1])
    """
    if device is not None:
        globals()["device"](device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]  # an alias, as PyTorch returns
    if not args or all(isinstance(a, builtins.int) for a in args) or (
            len(args) == 1 and isinstance(args[0], Size)):
        return Tensor._make(np.empty(_sizes(args) if args else (0,), self._data.dtype))
    if len(args) == 1:
        return Tensor._make(np.array(np.asarray(args[0]).astype(self._data.dtype)))
    raise TypeError(f"new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)})")


def _no_grad_inplace(self: Tensor, name: str) -> None:
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")


def _elementwise_(self: Tensor, name: str, fn: Any, others: tuple[Tensor, ...]) -> Tensor:
    _no_grad_inplace(self, name)
    data = self._data
    arrays = [np.broadcast_to(o._data, data.shape) for o in others]
    values = [fn(*(a[i].item() for a in (data, *arrays))) for i in np.ndindex(data.shape)]
    data[...] = np.array(values, dtype=data.dtype).reshape(data.shape) if values else data
    self._counter().bump(name)
    return self


def _apply_(self: Tensor, callable: Any) -> Tensor:  # noqa: A002 - PyTorch's name
    """Replace each element by ``callable(element)`` (slow: one Python call per element).

    >>> import retrograd as rg
    >>> rg.tensor([1.0, 2.0]).apply_(lambda v: v * 10)
    tensor([10., 20.])
    """
    return _elementwise_(self, "apply_", callable, ())


def _map_(self: Tensor, tensor: Tensor, callable: Any) -> Tensor:  # noqa: A002
    """``self[i] = callable(self[i], tensor[i])``, ``tensor`` broadcast to this shape.

    >>> import retrograd as rg
    >>> rg.tensor([1.0, 2.0]).map_(rg.tensor([3.0, 4.0]), lambda a, b: a * b)
    tensor([3., 8.])
    """
    return _elementwise_(self, "map_", callable, (tensor,))


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable: Any) -> Tensor:  # noqa: A002
    """``self[i] = callable(self[i], x[i], y[i])``, ``x`` and ``y`` broadcast to this shape.

    >>> import retrograd as rg
    >>> rg.tensor([1.0]).map2_(rg.tensor([2.0]), rg.tensor([3.0]), lambda a, b, c: a + b * c)
    tensor([7.])
    """
    return _elementwise_(self, "map2_", callable, (x, y))


def _as_subclass(self: Tensor, cls: type) -> Tensor:
    """A tensor of class ``cls`` sharing this one's data (and its graph).

    >>> import retrograd as rg
    >>> class My(rg.Tensor): pass
    >>> type(rg.ones(1).as_subclass(My)).__name__
    'My'
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not {cls!r}")
    out = object.__new__(cls)
    for slot in ("_data", "_requires_grad", "_grad_fn"):
        setattr(out, slot, getattr(self, slot))
    out.__dict__.update(self.__dict__)
    return out


def _is_set_to(self: Tensor, tensor: Tensor) -> builtins.bool:
    """Whether both tensors view the same memory with the same offset, sizes and strides.

    >>> import retrograd as rg
    >>> x = rg.ones(2, 3); x.is_set_to(x), x.is_set_to(x.t())
    (True, False)
    """
    a, b = self._data, tensor._data
    return bool(_data_ptr(self) == _data_ptr(tensor) and a.shape == b.shape and a.strides == b.strides
                and a.dtype == b.dtype and np.may_share_memory(a, b))


def _set_(self: Tensor, source: Tensor | None = None) -> Tensor:
    """Make this tensor view ``source``'s memory (or, without one, become empty).

    >>> import retrograd as rg
    >>> x = rg.ones(2); z = rg.zeros(1).set_(x); z.is_set_to(x)
    True
    """
    from .autograd.grad_mode import is_grad_enabled
    if self.requires_grad and self.is_leaf and is_grad_enabled():
        raise RuntimeError(_ops.inplace.LEAF_ERROR)
    if source is None:
        self._data = np.empty((0,), self._data.dtype)
        return self
    if not isinstance(source, Tensor):
        raise TypeError(f"set_(): argument 'source' must be Tensor, not {type(source).__name__}")
    if source._data.dtype != self._data.dtype:
        raise RuntimeError(f"Could not set tensor of type {_cpp_type_name(source._data.dtype)} to a tensor of "
                           f"type {_cpp_type_name(self._data.dtype)}")
    if source.requires_grad and is_grad_enabled():
        raise RuntimeError("set_() to a tensor that requires grad is not supported by retrograd; use "
                           "source.detach()")
    self._data = source._data
    self._version_counter = source._counter()  # one storage, one version counter
    return self


def _dim_order(self: Tensor, *, ambiguity_check: Any = False) -> tuple[builtins.int, ...]:
    """The dimensions from outermost to innermost in memory (by decreasing stride).

    >>> import retrograd as rg
    >>> rg.ones(2, 3, 4).permute(2, 0, 1).dim_order()
    (1, 2, 0)
    """
    strides = self.stride()
    return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))


def _volatile(self: Tensor) -> builtins.bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


Tensor.data_ptr = _data_ptr  # type: ignore[attr-defined]
Tensor.const_data_ptr = _data_ptr  # type: ignore[attr-defined]
Tensor.itemsize = property(lambda self: self._data.itemsize, doc="Bytes per element.")  # type: ignore[attr-defined]
Tensor.nbytes = property(  # type: ignore[attr-defined]
    lambda self: self._data.itemsize * self._data.size, doc="Bytes of the elements the tensor shows.")
Tensor.is_cpu = property(lambda self: True, doc="True: every retrograd tensor is on the CPU.")  # type: ignore[attr-defined]
Tensor.is_meta = property(lambda self: False, doc="False: there is no meta device.")  # type: ignore[attr-defined]
Tensor.is_pinned = lambda self, device=None: False  # type: ignore[attr-defined]
Tensor.is_shared = lambda self: False  # type: ignore[attr-defined]
Tensor.is_distributed = lambda self: False  # type: ignore[attr-defined]
Tensor.is_signed = lambda self: self._data.dtype.kind in "ifV"  # type: ignore[attr-defined]
Tensor.get_device = lambda self: -1  # type: ignore[attr-defined]
Tensor.is_same_size = _is_same_size  # type: ignore[attr-defined]
Tensor.char = lambda self, memory_format=None: self.to(_dtype.int8)  # type: ignore[attr-defined]
Tensor.new = _new  # type: ignore[attr-defined]
Tensor.apply_ = _apply_  # type: ignore[attr-defined]
Tensor.map_ = _map_  # type: ignore[attr-defined]
Tensor.map2_ = _map2_  # type: ignore[attr-defined]
Tensor.as_subclass = _as_subclass  # type: ignore[attr-defined]
Tensor.is_set_to = _is_set_to  # type: ignore[attr-defined]
Tensor.set_ = _set_  # type: ignore[attr-defined]
Tensor.dim_order = _dim_order  # type: ignore[attr-defined]
Tensor.volatile = property(_volatile, doc="Removed in PyTorch 0.4: always False, with a warning.")  # type: ignore[attr-defined]
Tensor.grad_dtype = property(lambda self: self.dtype, doc="The dtype the gradient must have.")  # type: ignore[attr-defined]
for _name in ("is_conj", "is_neg"):
    if not hasattr(Tensor, _name):  # (a complex-dtype op of the name keeps its own)
        setattr(Tensor, _name, lambda self: False)
for _name in ("resolve_conj", "resolve_neg", "conj", "conj_physical"):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, lambda self: self)
Tensor.__dlpack__ = lambda self, *args, **kwargs: self._data.__dlpack__(*args, **kwargs)  # type: ignore[attr-defined]
Tensor.__dlpack_device__ = lambda self: self._data.__dlpack_device__()  # type: ignore[attr-defined]


def _layout(self: Tensor) -> Any:
    from ._porting import strided  # (the layout objects load with the porting surface)
    return strided


Tensor.layout = property(_layout, doc="``torch.strided``: every retrograd tensor is dense.")  # type: ignore[attr-defined]


# ---- strided views and the in-place view ops (ops/strided.py, loaded on first call) ----------------

def _as_strided(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """A view of this tensor's storage (see ``retrograd.as_strided``).

    >>> import retrograd as rg
    >>> rg.arange(4.0).as_strided((2,), (2,))
    tensor([0., 2.])
    """
    return _ops.strided.as_strided_method(self, size, stride, storage_offset)  # type: ignore[no-any-return]


def _storage_offset(self: Tensor) -> builtins.int:
    """The offset of the first element in the storage, in elements.

    >>> import retrograd as rg
    >>> rg.arange(6.0).view(2, 3)[1].storage_offset()
    3
    """
    return _ops.strided.storage_offset(self)  # type: ignore[no-any-return]


def _strided_method(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(_ops.strided, name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}``: PyTorch's in-place view op (``retrograd/ops/strided.py``)."
    return method


Tensor.as_strided = _as_strided  # type: ignore[attr-defined]
Tensor.storage_offset = _storage_offset  # type: ignore[attr-defined]
for _name in ("as_strided_", "as_strided_scatter", "t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_",
              "unsqueeze_", "resize_", "resize_as_", "resize", "resize_as"):
    setattr(Tensor, _name, _strided_method(_name))


def _inplace_more_method(name: str) -> Any:
    def method(self: Tensor, other: Any) -> Any:
        return getattr(_ops.inplace_more, name)(self, other)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}``: PyTorch's in-place op (``retrograd/ops/inplace_more.py``)."
    return method


for _name in ("eq_", "ne_", "not_equal_", "floor_divide_", "heaviside_"):
    setattr(Tensor, _name, _inplace_more_method(_name))
del _name


def _linalg_extra_method(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(_ops.linalg_extra, name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``torch.{name}(self, ...)`` (``retrograd/ops/linalg_extra.py``)."
    return method


for _name in ("triangular_solve", "cholesky_solve", "cholesky_inverse", "qr", "lu", "lu_solve"):
    setattr(Tensor, _name, _linalg_extra_method(_name))
del _name
