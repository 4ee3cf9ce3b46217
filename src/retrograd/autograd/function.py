"""``autograd.Function``: user-defined ops with a hand-written backward, PyTorch's API.

>>> import retrograd as rg
>>> class Cube(rg.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x ** 3
...     @staticmethod
...     def backward(ctx, grad):
...         (x,) = ctx.saved_tensors
...         return grad * 3 * x ** 2
>>> x = rg.tensor([2.0], requires_grad=True)
>>> y = Cube.apply(x); y.backward(rg.ones(1)); x.grad
tensor([12.])
>>> type(y.grad_fn).__name__
'CubeBackward'
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .engine import gradient_edge
from .grad_mode import STATE, no_grad
from .graph import FREED, FREED_MESSAGE, Node, SavedTensor, save_input, unpack_saved


class FunctionCtx:
    """The ``ctx`` API: what ``forward`` records for ``backward``."""

    __slots__ = ()
    _to_save: tuple[Any, ...] = ()
    _dirty: tuple[Any, ...] = ()
    _non_differentiable: tuple[Any, ...] = ()
    materialize_grads: bool = True
    needs_input_grad: tuple[bool, ...] = ()

    def save_for_backward(self, *tensors: Any) -> None:
        self._to_save = tensors  # type: ignore[misc]

    def mark_dirty(self, *tensors: Any) -> None:
        self._dirty = tensors  # type: ignore[misc]

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self._non_differentiable = tensors  # type: ignore[misc]

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)  # type: ignore[misc]


class BackwardFunction(Node, FunctionCtx):
    """The node of one ``Function.apply`` call; it is also the ``ctx`` both methods receive."""

    _function: type[Function]
    _output_meta: tuple[Any, ...] = ()
    _tensor_input_positions: tuple[int, ...] = ()

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        saved = self._saved
        if saved is FREED:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(unpack_saved(value, self) for value in saved)

    def apply(self, grad_outputs: list[Any]) -> tuple[Any, ...]:
        from ..tensor import Tensor

        grads = list(grad_outputs)
        if self.materialize_grads:
            for k, g in enumerate(grads):
                if g is None:
                    shape, dtype = self._output_meta[k]
                    grads[k] = Tensor._make(np.zeros(shape, dtype))
        result = self._function.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        positions = self._tensor_input_positions
        if len(result) < self._n_forward_args:  # type: ignore[attr-defined]
            raise RuntimeError(
                f"function {type(self).__name__} returned an incorrect number of gradients "
                f"(expected {self._n_forward_args}, got {len(result)})"  # type: ignore[attr-defined]
            )
        out = []
        for position, (nxt, _) in zip(positions, self.next_functions):
            g = result[position]
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"function {type(self).__name__} returned a gradient of type {type(g).__name__}")
            out.append(g if nxt is not None else None)
        return tuple(out)


class FunctionMeta(type):
    """Creates the node class ``<Name>Backward`` once per Function subclass."""

    def __init__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> None:
        super().__init__(name, bases, namespace)
        cls._backward_cls = type(name + "Backward", (BackwardFunction,), {"_function": cls})  # type: ignore[attr-defined]


class Function(metaclass=FunctionMeta):
    """Base class for ops with a custom backward: define static ``forward(ctx, *args)`` (or
    ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grads)``,
    then call ``MyFunction.apply(*args)``."""

    _backward_cls: type[BackwardFunction]

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        return NotImplemented

    @classmethod
    def apply(cls, *args: Any) -> Any:
        from ..tensor import Tensor

        node = cls._backward_cls()
        node._n_forward_args = len(args)  # type: ignore[attr-defined]
        tensor_positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        custom_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            output = cls.forward(*args) if custom_setup else cls.forward(node, *args)
        if custom_setup:
            cls.setup_context(node, args, output)
        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        track = STATE.grad_enabled and any(node.needs_input_grad)
        wrapped = []
        for out in outputs:
            if isinstance(out, Tensor) and any(out is a for a in args) and not any(out is d for d in node._dirty):
                alias = Tensor._make(out._data)  # an input returned as is: a new alias, as PyTorch
                alias._version_counter = out._counter()
                out = alias
            wrapped.append(out)
        if track:
            node.next_functions = tuple(
                (gradient_edge(args[i]) or (None, 0)) if args[i]._requires_grad else (None, 0)
                for i in tensor_positions
            )
            node._tensor_input_positions = tensor_positions
            node._output_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), np.float32)
                                      for o in wrapped)
            node.num_outputs = len(wrapped)
            for k, out in enumerate(wrapped):
                if not isinstance(out, Tensor) or any(out is t for t in node._non_differentiable):
                    continue
                if out._data.dtype.kind in "fc":
                    out._requires_grad = True
                    out._grad_fn = node
                    if k:
                        out._output_nr = k
            node._saved = tuple(
                SavedTensor(t) if any(t is o for o in wrapped) else (save_input(t) if isinstance(t, Tensor) else t)
                for t in node._to_save
            )
        else:
            node._saved = tuple(node._to_save)
        node._to_save = ()
        return wrapped[0] if single else tuple(wrapped)


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """Run a Function's backward without recording a graph (it cannot be differentiated again)."""

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            return backward(ctx, *grads)

    return wrapper
