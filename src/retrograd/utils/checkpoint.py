"""Activation checkpointing (``torch.utils.checkpoint``): run a function without keeping the
tensors its backward needs, and recompute them from its inputs when backward asks for them.

``use_reentrant=False`` is built on saved-tensor hooks: the forward runs under hooks that keep
only a placeholder per saved tensor; the first unpack during backward runs the function once
more (under the forward's RNG state) with hooks that collect, in order, the tensors it saves,
and stops as soon as it has them all. ``use_reentrant=True`` (PyTorch's default when the
argument is omitted, with its warning) is a custom Function whose backward reruns the function
with grad enabled and backpropagates through that.
"""

from __future__ import annotations

import contextlib
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from ..autograd import backward as _backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph_hooks import saved_tensors_hooks
from ..factories import default_generator
from ..tensor import Tensor

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential", "noop_context_fn"]

_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


class CheckpointError(RuntimeError):
    """The recomputation did not save what the original forward saved."""


def noop_context_fn() -> tuple[contextlib.AbstractContextManager[Any], contextlib.AbstractContextManager[Any]]:
    """The default ``context_fn``: no context around the forward or the recomputation.

    >>> noop_context_fn()[0].__class__.__name__
    'nullcontext'
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


def _metadata(t: Tensor) -> dict[str, Any]:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _Holder:
    """What the forward's pack hook keeps in place of a saved tensor (weakly referenced by its
    frame, so a freed graph frees its slots)."""

    __slots__ = ("index", "__weakref__")

    def __init__(self, index: int) -> None:
        self.index = index


class _StopRecomputation(Exception):
    pass


class _Frame:
    """One checkpointed call: the placeholders handed out in the forward and the tensors its
    recomputation produced for them (each used once, then dropped)."""

    def __init__(self, recompute: Callable[[], Any], early_stop: bool, check_metadata: bool) -> None:
        self.recompute_fn = recompute
        self.early_stop = early_stop
        self.check_metadata = check_metadata
        self.weak_holders: list[weakref.ref[_Holder]] = []
        self.metadata: list[dict[str, Any]] = []
        self.recomputed: dict[int, Tensor] = {}

    def pack(self, t: Tensor) -> _Holder:
        holder = _Holder(len(self.weak_holders))
        self.weak_holders.append(weakref.ref(holder))
        self.metadata.append(_metadata(t))
        return holder

    def unpack(self, holder: _Holder) -> Tensor:
        if holder.index not in self.recomputed:
            self._recompute()
        return self.recomputed.pop(holder.index)

    def _recompute(self) -> None:
        count = [0]
        recomputed: dict[int, Tensor] = {}

        def pack(t: Tensor) -> None:
            index = count[0]
            count[0] += 1
            if index >= len(self.weak_holders):
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation than during the "
                    f"original forward pass.\n{_DEBUG_TIP}"
                )
            if self.weak_holders[index]() is not None:  # (a freed slot needs no value)
                recomputed[index] = t.detach()
            if self.early_stop and count[0] == len(self.weak_holders):
                raise _StopRecomputation

        def unpack(_: Any) -> Tensor:
            raise AssertionError("a recomputation's own graph is never run")  # pragma: no cover

        try:
            with saved_tensors_hooks(pack, unpack):
                self.recompute_fn()
        except _StopRecomputation:
            pass
        if count[0] != len(self.weak_holders):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {count[0]}.\n{_DEBUG_TIP}"
            )
        mismatched = ""
        for index, value in recomputed.items():
            if self.check_metadata and _metadata(value) != self.metadata[index]:
                mismatched += (f"tensor at position {index}:\nsaved metadata: {self.metadata[index]}\n"
                               f"recomputed metadata: {_metadata(value)}\n")
        if mismatched:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than "
                f"during the forward pass.\n{mismatched}.\n{_DEBUG_TIP}"
            )
        self.recomputed.update(recomputed)


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)``, keeping none of the tensors its backward needs: they are
    recomputed during backward. ``preserve_rng_state=True`` (a keyword) replays the forward's
    random numbers, so dropout draws the same mask. Pass ``use_reentrant`` explicitly (PyTorch
    warns otherwise and uses the reentrant variant); ``False`` is recommended.

    >>> import retrograd as rg
    >>> calls = []
    >>> def block(x):
    ...     calls.append(1)
    ...     return x.tanh().exp()
    >>> x = rg.tensor([0.5, 1.0], requires_grad=True)
    >>> y = checkpoint(block, x, use_reentrant=False)
    >>> y.sum().backward(); len(calls)  # the forward, then once more in backward
    2
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
            "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    if determinism_check not in ("default", "none"):
        raise ValueError(
            "determinism_check should be one of ['default', 'none'], but got " + str(determinism_check)
        )
    forward_context, recompute_context = context_fn()
    rng_state = default_generator.get_state() if preserve else None

    def recompute() -> None:
        outer_state = default_generator.get_state() if preserve else None
        try:
            if rng_state is not None:
                default_generator.set_state(rng_state)
            with enable_grad(), recompute_context:
                function(*args, **kwargs)
        finally:
            if outer_state is not None:
                default_generator.set_state(outer_state)

    frame = _Frame(recompute, early_stop, determinism_check == "default")
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


class CheckpointFunction(Function):
    """The reentrant variant: forward without a graph, backward recomputes and backpropagates."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool, *args: Any) -> Any:
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=4)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.fwd_rng_state = default_generator.get_state() if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = tensor
        outer_state = default_generator.get_state() if ctx.preserve_rng_state else None
        try:
            if ctx.fwd_rng_state is not None:
                default_generator.set_state(ctx.fwd_rng_state)
            detached = [_detach_like(a) for a in inputs]
            with enable_grad():
                outputs = ctx.run_function(*detached)
        finally:
            if outer_state is not None:
                default_generator.set_state(outer_state)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        with_grad = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in with_grad], [g for _, g in with_grad])
        return (None, None, *(a.grad if isinstance(a, Tensor) else None for a in detached))


def _detach_like(value: Any) -> Any:
    if not isinstance(value, Tensor):
        return value
    out = value.detach()
    out.requires_grad = value.requires_grad
    return out


def checkpoint_sequential(functions: Any, segments: int, input: Tensor, use_reentrant: bool | None = None,  # noqa: A002
                          **kwargs: Any) -> Any:
    """Run ``functions`` (a ``Sequential`` or a list of modules/functions) in ``segments``
    checkpointed chunks; the last chunk runs normally.

    >>> import retrograd as rg
    >>> model = rg.nn.Sequential(rg.nn.Linear(3, 3), rg.nn.Tanh(), rg.nn.Linear(3, 1))
    >>> out = checkpoint_sequential(model, 2, rg.ones(2, 3, requires_grad=True), use_reentrant=False)
    >>> out.shape
    torch.Size([2, 1])
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can "
            "pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start: int, end: int, chain: list[Any]) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = chain[j](x)
            return x

        return forward

    from ..nn import Sequential

    chain: list[Any] = list(functions.children()) if isinstance(functions, Sequential) else list(functions)
    segment_size = len(chain) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, chain), input, use_reentrant=use_reentrant,  # noqa: A001
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(chain) - 1, chain)(input)
