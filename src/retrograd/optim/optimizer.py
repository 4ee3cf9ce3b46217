"""``Optimizer``: parameter groups, per-parameter state, ``state_dict`` and ``zero_grad`` with
PyTorch's formats and checks. Subclasses implement ``step``."""

from __future__ import annotations

import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._grad_utils import zero_grads
from ..autograd.grad_mode import enable_grad, set_grad_enabled
from ..factories import tensor, zeros_like
from ..tensor import Tensor

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks a hyper-parameter with no default (every group must give it)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()


def _typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return obj.type()  # type: ignore[no-any-return]
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in ("", "builtins") else f"{module}.{cls.__qualname__}"


class _HookHandle:
    _ids = itertools.count()

    def __init__(self, hooks: dict[int, Any]) -> None:
        self.hooks = hooks
        self.id = next(_HookHandle._ids)

    def remove(self) -> None:
        self.hooks.pop(self.id, None)

    def __enter__(self) -> _HookHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _with_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """Runs the optimizer's step pre- and post-hooks around a subclass's ``step``."""

    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                from ..nn.modules.module import _new_args_kwargs  # optim loads without nn until needed

                args, kwargs = _new_args_kwargs(result, hook)
        out = step(self, *args, **kwargs)
        self._opt_called = True
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper._hooked = True  # type: ignore[attr-defined]
    return wrapper


class Optimizer:
    """Base class of optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter
    groups, each with its own ``params`` and hyper-parameters; missing ones take ``defaults``).

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.ones(2))
    >>> opt = rg.optim.SGD([{'params': [p], 'lr': 0.5}], lr=0.1)
    >>> opt.param_groups[0]['lr'], opt.defaults['lr']
    (0.5, 0.1)
    """

    _opt_called: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_hooks(step)  # type: ignore[method-assign]

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_step_post_hooks: dict[int, Callable[..., Any]] = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + _typename(params)
            )
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    # Per-group flags an older pickled state may lack, with their defaults, filled in (in this
    # order) by ``__setstate__``, as each PyTorch optimizer's own ``__setstate__`` does.
    _group_flag_defaults: tuple[tuple[str, Any], ...] = ()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())
        for group in self.param_groups:
            for key, value in self._group_flag_defaults:
                group.setdefault(key, value)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # -- groups ---------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own hyper-parameters (others from ``defaults``)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of tensors in "
                "sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        tensors = []
        names = []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause an "
                "error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients ------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors: to ``None`` (default) or to zeros in place."""
        for group in self.param_groups:
            zero_grads(group["params"], set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters once (subclasses)."""
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _groups_with_grads(self) -> Iterator[tuple[dict[str, Any], list[Any]]]:
        """Each param group with its parameters that have a gradient, as ``step`` walks them:
        grad mode as ``differentiable`` asks (PyTorch records the update only then), NumPy's
        floating-point reports off as for the tensor ops."""
        with set_grad_enabled(bool(self.defaults["differentiable"])), np.errstate(all="ignore"):
            for group in self.param_groups:
                yield group, _params_with_grad(group)

    @staticmethod
    def _plain_group(group: dict[str, Any], *hyperparameters: Any) -> bool:
        """Whether a group's update may take the NumPy path: no weight decay, not maximizing, not
        recorded, and every hyperparameter a number (not a tensor)."""
        return (group["weight_decay"] == 0 and not group["maximize"] and not group["differentiable"]
                and all(_number(x) for x in hyperparameters))

    def _state_at(self, p: Tensor, buffers: tuple[str, ...]) -> dict[str, Any]:
        """``self.state[p]``, started on first use as ``step`` 0 and a zero tensor like ``p`` for each
        name in ``buffers`` (in that order: the order of the ``state_dict``'s keys)."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = tensor(0.0)
            for name in buffers:
                state[name] = zeros_like(p)
        return state

    # -- hooks ----------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> _HookHandle:
        """``hook(optimizer, args, kwargs)`` runs before each ``step``; it may return new (args, kwargs)."""
        handle = _HookHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable[..., Any]) -> _HookHandle:
        """``hook(optimizer, args, kwargs)`` runs after each ``step``."""
        handle = _HookHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    # -- state_dict -----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: per-parameter state}, 'param_groups': [group with 'params' as indices]}``;
        parameters are numbered in group order. State tensors are returned by reference."""
        mapping: dict[int, int] = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    @staticmethod
    def _cast_state(param: Tensor, value: Any, key: str | None = None) -> Any:
        if isinstance(value, Tensor):
            if key != "step" and param.is_floating_point():
                return value.to(param.dtype)
            return value
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, v, k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast_state(param, v, key) for v in value)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load state and hyper-parameters saved by ``state_dict`` (groups must match in size)."""
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups, strict=False)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(s["params"] for s in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups), strict=False))
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast_state(param, v)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups, strict=False):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.state = state
        self.param_groups = new_groups


def _params_with_grad(group: dict[str, Any]) -> list[Tensor]:
    return [p for p in group["params"] if p.grad is not None]


def _grad_of(p: Tensor, maximize: bool) -> Tensor:
    """``p.grad`` (negated when maximizing)."""
    grad: Tensor = p.grad  # type: ignore[assignment]
    return -grad if maximize else grad


def _plain_arrays(*tensors: Tensor) -> list[np.ndarray] | None:
    """The arrays of a parameter and of what its update reads and writes (its gradient, its state
    buffers), when the update may be written with NumPy straight into them with the very results
    and version bumps of the tensor in-place ops (``ops/inplace.py``, ``_write_with_ufunc``): all
    writeable real floating arrays of the first one's dtype and shape, none of an inference
    tensor, none with a repeated element (a zero stride), and none sharing memory with another.
    Else None, and the tensor ops run, with their checks and errors.

    >>> import retrograd as rg
    >>> p = rg.zeros(2, requires_grad=True)
    >>> len(_plain_arrays(p, rg.ones(2))), _plain_arrays(p, rg.ones(2, dtype=rg.float64))
    (2, None)
    """
    arrays = []
    first = tensors[0]._data
    shape, dtype = first.shape, first.dtype
    if dtype.kind not in "fV":
        return None
    owners = True  # every array owns its memory: two distinct ones cannot overlap
    for t in tensors:
        a = t._data
        if (type(a) is not np.ndarray or a.dtype is not dtype or a.shape != shape or t._is_inference
                or not a.flags.writeable or 0 in a.strides):
            return None
        if a.base is not None:
            owners = False
        arrays.append(a)
    if not owners or len(set(map(id, arrays))) != len(arrays):
        for i, a in enumerate(arrays):
            for b in arrays[i + 1:]:
                if np.may_share_memory(a, b):
                    return None
    return arrays


def _add_into(target: Tensor, out: np.ndarray, other: np.ndarray | float, alpha: float = 1) -> None:
    """``target.add_(other, alpha=alpha)`` on ``target``'s array ``out`` as the in-place op runs it
    (``ops/inplace.py``, ``_write_with_ufunc``), version bump included: for the optimizers'
    NumPy updates (``_plain_arrays``)."""
    np.add(out, other if alpha == 1 else np.multiply(other, alpha), out=out)
    target._counter().bump("add_")


def _mul_into(target: Tensor, out: np.ndarray, factor: float) -> None:
    """``target.mul_(factor)`` on ``target``'s array ``out``, as ``_add_into``."""
    np.multiply(out, factor, out=out)
    target._counter().bump("mul_")


def _number(x: Any) -> bool:
    """A Python number (as the tensor in-place ops take it straight to NumPy)."""
    return type(x) is float or type(x) is int


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)
