"""Module backward hooks, as PyTorch runs them (``torch.utils.hooks.BackwardHook``).

A module call with full backward hooks or backward pre-hooks passes the tensors it receives
and the tensors it returns through an identity node (``BackwardHookFunctionBackward``). A
post-hook on the output side's node sees the gradients of the module's outputs (and runs the
user's backward pre-hooks, which may replace them); a post-hook on the input side's node sees
the gradients of the module's inputs and runs the user's full backward hooks, which may
replace those. Legacy ``register_backward_hook`` hooks are node post-hooks on the output's
``grad_fn``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...autograd.engine import gradient_edge
from ...autograd.grad_mode import STATE
from ...autograd.graph import Node
from ...tensor import Tensor

MIXED_HOOKS_ERROR = (
    "Cannot use both regular backward hooks and full backward hooks on a single Module. Please use only one of them."
)
MIXED_GLOBAL_HOOKS_ERROR = (
    "Cannot use both regular backward hooks and full backward hooks as a global Module hook. Please use only one "
    "of them."
)


class BackwardHookFunctionBackward(Node):
    """Identity: the gradient of each output is the gradient of the matching input. Like
    PyTorch's (a custom Function), a missing gradient becomes zeros, so a full backward hook
    sees zeros for a tensor input that does not require grad or was not used."""

    def apply(self, grad_outputs: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        return tuple(
            g if g is not None else Tensor._make(np.zeros(*meta)) for g, meta in zip(grad_outputs, self._output_meta)
        )


def _through_identity(tensors: Sequence[Tensor]) -> tuple[Node, list[Tensor]]:
    """New tensors aliasing ``tensors`` (same memory and version counter), outputs of one
    identity node whose edges are the originals' (those that do not require grad stay so)."""
    node = BackwardHookFunctionBackward()
    node.next_functions = tuple(
        (gradient_edge(t) or (None, 0)) if t._requires_grad else (None, 0) for t in tensors
    )
    node.num_outputs = len(tensors)
    node._output_meta = tuple((t._data.shape, t._data.dtype) for t in tensors)
    outs = []
    for k, t in enumerate(tensors):
        out = Tensor._make(t._data)
        out._version_counter = t._counter()
        if t._requires_grad:
            out._requires_grad = True
            out._grad_fn = node
            if k:
                out._output_nr = k
        outs.append(out)
    return node, outs


class BackwardHook:
    """The backward hooks of one module call (the state between the output side's pre-hook
    and the input side's post-hook: the gradients of the outputs)."""

    def __init__(self, module: Any, user_hooks: list[Callable[..., Any]], user_pre_hooks: list[Callable[..., Any]]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.n_outputs = 0
        self.input_tensors_index: list[int] | None = None
        self.output_tensors_index: list[int] | None = None

    @staticmethod
    def _pack_with_none(indices: Sequence[int], values: Sequence[Any], size: int) -> tuple[Any, ...]:
        packed: list[Any] = [None] * size
        for i, v in zip(indices, values):
            packed[i] = v
        return tuple(packed)

    @staticmethod
    def _unpack_none(indices: Sequence[int], values: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(values[i] for i in indices)

    def _apply_on_tensors(self, register: Callable[[Node], None], args: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[int] | None]:
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not any(args[i]._requires_grad for i in index) or not STATE.grad_enabled:
            return args, None
        node, outs = _through_identity([args[i] for i in index])
        register(node)
        new_args = list(args)
        for i, out in zip(index, outs):
            new_args[i] = out
        return tuple(new_args), index

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        def register(node: Node) -> None:
            def hook(grad_input: tuple[Any, ...], grad_output: tuple[Any, ...]) -> Any:  # (named as PyTorch's)
                return self._input_hook(grad_input, grad_output)

            node.register_hook(hook)

        new_args, self.input_tensors_index = self._apply_on_tensors(register, args)
        self.n_inputs = len(args)
        return new_args

    def setup_output_hook(self, result: Any) -> Any:
        def register(node: Node) -> None:
            def hook(grad_input: tuple[Any, ...], grad_output: tuple[Any, ...]) -> Any:  # (named as PyTorch's)
                return self._output_hook(grad_input, grad_output)

            node.register_hook(hook)

        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        new_outputs, self.output_tensors_index = self._apply_on_tensors(register, outputs)
        self.n_outputs = len(outputs)
        return new_outputs[0] if single else new_outputs

    def _output_hook(self, _: tuple[Any, ...], grad_output: tuple[Any, ...]) -> tuple[Any, ...]:
        assert self.output_tensors_index is not None
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
        expected = len(self.grad_outputs)
        for pre_hook in self.user_pre_hooks:
            replaced = pre_hook(self.module, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != expected:
                raise RuntimeError(
                    f"Backward pre hook returned an invalid number of grad_output, got {len(replaced)}, but "
                    f"expected {expected}"
                )
            self.grad_outputs = tuple(replaced)
        grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:  # no input requires grad: the hooks run now
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module outputs since no "
                "inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.register_full_backward_hook for more details.",
                stacklevel=5,
            )
            grad_inputs = self._pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should always return None or "
                        "None for all gradients."
                    )
            self.grad_outputs = None
        return self._unpack_none(self.output_tensors_index, grad_outputs)

    def _input_hook(self, grad_input: tuple[Any, ...], _: tuple[Any, ...]) -> tuple[Any, ...] | None:
        if self.grad_outputs is None:  # the gradient reached the inputs without passing the outputs
            return None
        assert self.input_tensors_index is not None
        res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(out)}, but expected {len(res)}"
                )
            res = tuple(out)
        self.grad_outputs = None
        return self._unpack_none(self.input_tensors_index, res)


def register_legacy_hooks(module: Any, hooks: list[Callable[..., Any]], args: tuple[Any, ...], result: Any) -> None:
    """``register_backward_hook``'s hooks: post-hooks on the ``grad_fn`` of the (first) output,
    with PyTorch's deprecation warnings where that node does not cover the module."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(_WrappedHook(hook, module))
    _maybe_warn(args, result, grad_fn)


class _WrappedHook:
    def __init__(self, hook: Callable[..., Any], module: Any) -> None:
        self.hook = hook
        self.module = module
        self.__name__ = getattr(hook, "__name__", "<unknown>")

    def __call__(self, grad_input: Any, grad_output: Any) -> Any:
        return self.hook(self.module, grad_input, grad_output)


def _tensors_or_warn(value: Any, verb: str, grad_name: str) -> tuple[Tensor, ...] | None:
    """``value`` as a tuple of Tensors; ``None`` (after PyTorch's deprecation warning, at the module's
    caller) where it is neither a Tensor nor a tuple of them."""
    if isinstance(value, Tensor):
        return (value,)
    if isinstance(value, tuple) and all(isinstance(v, Tensor) for v in value):
        return value
    warnings.warn(
        f"Using non-full backward hooks on a Module that does not {verb} a single Tensor or a tuple of "
        "Tensors is deprecated and will be removed in future versions. This hook will be missing some of "
        f"the {grad_name}. Please use register_full_backward_hook to get the documented behavior.",
        FutureWarning, stacklevel=5,
    )
    return None


def _maybe_warn(inputs: Any, result: Any, grad_fn: Node) -> None:
    result = _tensors_or_warn(result, "return", "grad_output")
    if result is None:
        return
    inputs = _tensors_or_warn(inputs, "take as input", "grad_input")
    if inputs is None:
        return
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warnings.warn(
            "Using a non-full backward hook when outputs are nested in python data structure is deprecated and will "
            "be removed in future versions. This hook will be missing some grad_output.",
            FutureWarning, stacklevel=4,
        )
    elif len(out_grad_fn) > 1:
        warnings.warn(
            "Using a non-full backward hook when outputs are generated by different autograd Nodes is deprecated and "
            "will be removed in future versions. This hook will be missing some grad_output. Please use "
            "register_full_backward_hook to get the documented behavior.",
            FutureWarning, stacklevel=4,
        )
    else:
        inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
        next_functions = {n[0] for n in grad_fn.next_functions}
        if inputs_grad_fn != next_functions:
            warnings.warn(
                "Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated and "
                "will be removed in future versions. This hook will be missing some grad_input. Please use "
                "register_full_backward_hook to get the documented behavior.",
                FutureWarning, stacklevel=4,
            )
