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
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from . import forward_ad
from .engine import gradient_edge
from .grad_mode import STATE, no_grad
from .graph import FREED_TYPE, Node, SavedTensor, freed_message, mark_younger_targets, save_input, unpack_saved


class FunctionCtx:
    """The ``ctx`` API: what ``forward`` records for ``backward``."""

    __slots__ = ()
    _to_save: tuple[Any, ...] = ()
    _to_save_forward: tuple[Any, ...] = ()
    _dirty: tuple[Any, ...] = ()
    _non_differentiable: tuple[Any, ...] = ()
    materialize_grads: bool = True
    _materialize_non_diff_grads: bool = True  # False: outputs marked non-differentiable get None
    needs_input_grad: tuple[bool, ...] = ()

    def save_for_backward(self, *tensors: Any) -> None:
        from ..tensor import Tensor

        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors  # type: ignore[misc]

    def save_for_forward(self, *tensors: Any) -> None:
        """Tensors the ``jvp`` staticmethod reads back as ``ctx.saved_tensors`` (forward AD)."""
        self._to_save_forward = tensors  # type: ignore[misc]

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
    _input_meta: tuple[Any, ...] = ()  # (shape, dtype) per tensor input, to check gradients
    _non_diff_outputs: tuple[int, ...] = ()  # outputs marked non-differentiable
    _apply_without_grads = True  # as in PyTorch: backward runs (on zeros, or on Nones) when no gradient arrives

    def __repr__(self) -> str:
        # PyTorch makes these classes in torch.autograd.function and prints them with the module.
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        saved = self._saved
        if not saved and type(saved) is FREED_TYPE:
            raise RuntimeError(freed_message(saved))
        return tuple(unpack_saved(value, self) for value in saved)

    def apply(self, grad_outputs: list[Any]) -> tuple[Any, ...]:
        from ..tensor import Tensor

        grads = list(grad_outputs)
        if self.materialize_grads:
            for k, g in enumerate(grads):
                if g is None:
                    if not self._materialize_non_diff_grads and k in self._non_diff_outputs:
                        continue
                    shape, dtype = self._output_meta[k]
                    grads[k] = Tensor._make(np.zeros(shape, dtype))
        result = self._user_backward()(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        return self._check_gradients(result)

    def _user_backward(self) -> Callable[..., Any]:
        """The Function's ``backward``, or its ``vjp`` (another name for it); not both."""
        function = self._function
        backward, vjp = function.backward, function.vjp
        if backward is not Function.backward and vjp is not Function.backward:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                               "You should only implement one of them.")
        return vjp if vjp is not Function.backward else backward

    def _check_gradients(self, result: tuple[Any, ...]) -> tuple[Any, ...]:
        """PyTorch's checks of what ``backward`` returned: one gradient per forward argument
        (extra trailing Nones allowed), each a Tensor or None, None for non-tensor arguments, of
        a shape that sums to its input's; returns one gradient per edge, cast to the input's dtype."""
        from ..tensor import Tensor

        name = type(self).__name__
        expected: int = self._n_forward_args  # type: ignore[attr-defined]
        if len(result) != expected:
            if len(result) < expected or any(g is not None for g in result[expected:]):
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients (expected {expected}, got {len(result)})"
                )
            result = result[:expected]
        positions = self._tensor_input_positions
        for i, g in enumerate(result):
            if g is None:
                continue
            if not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if i not in positions:
                raise RuntimeError(
                    f"function {name} returned a gradient different than None at position {i + 1}, but the "
                    "corresponding forward input was not a Variable"
                )
        out: list[Any] = []
        for index, (position, (nxt, _), (shape, dtype)) in enumerate(
                zip(positions, self.next_functions, self._input_meta)):
            g = result[position]
            if g is None or nxt is None:
                out.append(None)
                continue
            if g._data.shape != shape:
                if not _expandable(shape, g._data.shape):
                    raise RuntimeError(
                        f"Function {name} returned an invalid gradient at index {index} - got {list(g._data.shape)} "
                        f"but expected shape compatible with {list(shape)}"
                    )
                g = g.sum_to_size(shape)
            if g._data.dtype != dtype:
                g = g.to(Tensor._make(np.zeros((), dtype)).dtype)
            out.append(g)
        return tuple(out)


def _expandable(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (so a gradient of ``target`` sums back to it)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


DIRTY_NOT_RETURNED = (
    "Some elements marked as dirty during the forward method were not returned as output. The inputs that "
    "are modified inplace must all be outputs of the Function."
)
DIRTY_LEAF = "a leaf Variable that requires grad has been used in an in-place operation."
DIRTY_VIEW_MULTI = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return "
    "more than one Tensor. This is not supported by the current autograd engine. You should either make sure "
    "the input is not a view (using .clone() for example) or make your Function only return one Tensor "
    "(potentially splitting it into two Functions: one doing the inplace that returns a single Tensor and a "
    "second one that does the other operations). You can ask on the forum https://discuss.pytorch.org/ if you "
    "need help to do this change."
)


def _bind_default_args(forward: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The positional arguments of ``forward(*args, **kwargs)`` with defaults filled in (what
    ``setup_context`` receives as ``inputs``)."""
    bound = inspect.signature(forward).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args)


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
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(JVP_MISSING)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        return NotImplemented

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        from ..tensor import Tensor

        custom_setup = cls.setup_context is not Function.setup_context
        if custom_setup:  # ``inputs`` holds every positional argument, defaults included
            args = _bind_default_args(cls.forward, args, kwargs)
        node = cls._backward_cls()
        node._n_forward_args = len(args)  # type: ignore[attr-defined]
        tensor_positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        if forward_ad.DUAL[0] is not None:  # forward AD: the Function's own jvp, not its forward's ops
            with no_grad(), forward_ad.suspended():
                output = cls.forward(*args, **kwargs) if custom_setup else cls.forward(node, *args, **kwargs)
        else:
            with no_grad():
                output = cls.forward(*args, **kwargs) if custom_setup else cls.forward(node, *args, **kwargs)
        if custom_setup:
            cls.setup_context(node, args, output)
        out_tangents = _custom_jvp(cls, node, args, output) if forward_ad.DUAL[0] is not None else None
        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        dirty = node._dirty
        if any(not any(d is o for o in outputs) for d in dirty):
            raise RuntimeError(DIRTY_NOT_RETURNED)
        track = STATE.grad_enabled and any(node.needs_input_grad)
        wrapped = []
        for out in outputs:
            if isinstance(out, Tensor) and any(out is a for a in args) and (
                    not any(out is d for d in dirty) or not track and out._requires_grad):
                # An input returned as is: a new view of it, as PyTorch makes (not tracked: an alias
                # that does not require grad).
                alias = Tensor._make(out._data)
                counter = alias._version_counter = out._counter()
                if track:
                    alias._base = out if out._base is None else out._base
                    alias._view_version = counter.value
                out = alias
            wrapped.append(out)
        dirty_views = _check_dirty(dirty, len(wrapped)) if track else []
        for d in dirty:  # PyTorch counts the Function's write once more
            d._counter().bump("mark_dirty")
        if track:
            node.next_functions = tuple(
                (gradient_edge(args[i]) or (None, 0)) if args[i]._requires_grad else (None, 0)
                for i in tensor_positions
            )
            mark_younger_targets(node)  # (what the forward recorded in grad mode, if anything)
            node._tensor_input_positions = tensor_positions
            node._input_meta = tuple((args[i]._data.shape, args[i]._data.dtype) for i in tensor_positions)
            node._output_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), np.float32)
                                      for o in wrapped)
            node.num_outputs = len(wrapped)
            n_diff = sum(1 for o in wrapped if isinstance(o, Tensor) and o._data.dtype.kind in "fcV"
                         and not any(o is t for t in node._non_differentiable))
            node._non_diff_outputs = tuple(k for k, out in enumerate(wrapped)
                                           if any(out is t for t in node._non_differentiable))
            for k, out in enumerate(wrapped):
                if not isinstance(out, Tensor) or k in node._non_diff_outputs:
                    continue
                if out._data.dtype.kind in "fcV":
                    out._requires_grad = True
                    out._grad_fn = node
                    if k:
                        out._output_nr = k
                    if out._base is not None and not any(out is d for d in dirty):
                        # In-place writes through it would bypass the custom backward: refused.
                        out._creation_meta = "multi" if n_diff > 1 else "custom"
            node._saved = tuple(
                SavedTensor(t) if any(t is o for o in wrapped) else (save_input(t) if isinstance(t, Tensor) else t)
                for t in node._to_save
            )
            for view in dirty_views:  # the base's history is rewritten, as for any in-place op on a view
                from ..ops.inplace import rebase_dirty_view

                rebase_dirty_view(view, node, tensor_positions.index(
                    next(i for i in tensor_positions if args[i] is view)))
        else:
            node._saved = tuple(node._to_save)
        # The node must not keep its outputs: an output refers to the node (a reference cycle).
        node._to_save = node._dirty = node._non_differentiable = ()
        if out_tangents is not None:
            level = forward_ad.DUAL[0]
            for out, t in zip(wrapped, out_tangents):
                if isinstance(out, Tensor) and isinstance(t, Tensor) and out._data.dtype.kind in "fc":
                    forward_ad.set_tangent(out, t, level)  # type: ignore[arg-type]
        return wrapped[0] if single else tuple(wrapped)


JVP_MISSING = "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."


def _custom_jvp(cls: Any, node: Any, args: tuple[Any, ...], output: Any) -> tuple[Any, ...] | None:
    """Forward AD through a custom Function: its ``jvp(ctx, *tangents)`` (zeros for inputs without
    a tangent, as PyTorch passes), with ``ctx.saved_tensors`` what ``save_for_forward`` kept."""
    from ..tensor import Tensor

    tangents = [forward_ad.tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return None
    if cls.jvp is Function.jvp:
        raise NotImplementedError(JVP_MISSING)
    filled = [t if t is not None or not isinstance(a, Tensor) else Tensor._make(np.zeros_like(a._data))
              for a, t in zip(args, tangents)]
    node._saved = tuple(node._to_save_forward)
    with forward_ad.suspended():
        result = cls.jvp(node, *filled)
    node._to_save_forward = ()
    return result if isinstance(result, tuple) else (result,)


def _check_dirty(dirty: tuple[Any, ...], n_outputs: int) -> list[Any]:
    """PyTorch's refusals for inputs marked dirty, in its order; returns those that are views."""
    from ..ops.inplace import check_inplace

    views = []
    for d in dirty:
        base = d._base
        # A leaf that requires grad, or a view with no history of a base that does (made in no_grad)
        if d._grad_fn is None and (d._requires_grad or base is not None and base._requires_grad):
            raise RuntimeError(DIRTY_LEAF)
        if base is None:
            continue
        if n_outputs != 1:
            raise RuntimeError(DIRTY_VIEW_MULTI)
        check_inplace(d)  # views that refuse in-place writes (several views, custom Function, of a leaf)
        views.append(d)
    return views


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """Run a Function's backward without recording a graph (it cannot be differentiated again)."""

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            return backward(ctx, *grads)

    return wrapper
