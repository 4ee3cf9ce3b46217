"""What the optimizers added after the first five (NAdam, RAdam, Adamax, ...) share: PyTorch's
checks of their hyperparameters, the refusal of ``capturable=True`` (PyTorch refuses it at
``step`` on the CPU), and the start of their NumPy fast paths."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..tensor import Tensor
from .optimizer import _add_into, _mul_into, _plain_arrays

_CAPTURABLE_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"

# The per-group flags these optimizers' ``__setstate__`` fills in (``Optimizer._group_flag_defaults``).
_GROUP_FLAGS = (("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))


# PyTorch's constructor checks, by hyperparameter name: (valid, message).
_HYPERPARAMETER_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "lr": (lambda v: 0.0 <= v, "Invalid learning rate: {}"),
    "rho": (lambda v: 0.0 <= v <= 1.0, "Invalid rho value: {}"),
    "eps": (lambda v: 0.0 <= v, "Invalid epsilon value: {}"),
    "weight_decay": (lambda v: 0.0 <= v, "Invalid weight_decay value: {}"),
    "momentum_decay": (lambda v: 0.0 <= v, "Invalid momentum_decay value: {}"),
}


def _check_hyperparameters(**values: Any) -> None:
    """PyTorch's constructor checks, in the order given (the first failure is the one reported):
    ``lr`` (a 1-element tensor, then non-negative), ``betas`` (each in [0, 1)), and the others of
    ``_HYPERPARAMETER_CHECKS``."""
    for name, value in values.items():
        if name == "lr":
            _check_lr(value)
        if name == "betas":
            for index in (0, 1):
                if not 0.0 <= value[index] < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {index}: {value[index]}")
            continue
        valid, message = _HYPERPARAMETER_CHECKS[name]
        if not valid(value):
            raise ValueError(message.format(value))


# The order PyTorch's constructors check these in (Adadelta: lr, rho, eps, weight_decay; Adamax,
# NAdam, RAdam: lr, eps, betas, weight_decay[, momentum_decay]).
_CHECK_ORDER = ("lr", "rho", "eps", "betas", "weight_decay", "momentum_decay")


def _checked_defaults(**defaults: Any) -> dict[str, Any]:
    """An optimizer's ``defaults``, once PyTorch's constructor checks of the hyperparameters among
    them have passed (``_check_hyperparameters``, in ``_CHECK_ORDER``): each is named once.

    >>> _checked_defaults(lr=0.1, eps=1e-8, foreach=None)
    {'lr': 0.1, 'eps': 1e-08, 'foreach': None}
    >>> _checked_defaults(lr=0.1, betas=(0.9, 1.0), eps=-1.0)
    Traceback (most recent call last):
    ValueError: Invalid epsilon value: -1.0
    """
    _check_hyperparameters(**{name: defaults[name] for name in _CHECK_ORDER if name in defaults})
    return defaults


def _plain_state(p: Tensor, state: dict[str, Any], *buffers: str) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """The start of a NumPy update (``_<name>_update_arrays``): the arrays of ``p``, its gradient and
    the state ``buffers``, with ``state["step"]`` counted (``step.add_(1)``) and its array returned
    too; None, with nothing done, when ``_plain_arrays`` refuses them or ``p`` is 0-d (NumPy makes
    scalars of its temporaries) and the tensor ops must run instead."""
    step_t: Tensor = state["step"]
    arrays = _plain_arrays(p, p._grad, *(state[name] for name in buffers))  # type: ignore[arg-type]
    steps = _plain_scalar(step_t)
    if arrays is None or not arrays[0].ndim or steps is None:
        return None
    _add_into(step_t, steps, 1)
    return steps, arrays


def _check_lr(lr: Any) -> None:
    """PyTorch's check of a tensor learning rate (before the ``Invalid learning rate`` one)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def _lr_value(lr: Any) -> float:
    """A tensor ``lr`` read as a Python number (PyTorch's ``_to_scalar``)."""
    return lr.item() if isinstance(lr, Tensor) else lr  # type: ignore[no-any-return]


def _refuse_capturable(group: dict[str, Any], what: str, devices: str = _CAPTURABLE_DEVICES) -> None:
    """``capturable=True`` graphs the update on an accelerator: on the CPU PyTorch's step fails with
    this assertion (the parameters are on no supported device)."""
    if group.get("capturable"):
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: {devices}.")


def _plain_scalar(t: Any) -> Any:
    """The array of a 0-d floating state tensor (``step``, ``mu_product``) that a NumPy update may
    write straight into, else None."""
    a = t._data if isinstance(t, Tensor) else None
    if (type(a) is not np.ndarray or a.dtype.kind not in "fV" or a.shape != () or t._is_inference
            or not a.flags.writeable):
        return None
    return a


def _write_into(target: Tensor, out: np.ndarray, values: np.ndarray, name: str) -> None:
    """An in-place op's write of its forward's result (``ops/inplace.py``'s ``_write``) into
    ``target``'s array ``out``, version bump included."""
    np.copyto(out, values, casting="unsafe")
    target._counter().bump(name)


def _lerp_into(target: Tensor, out: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``target.lerp_(end, weight)`` with a number ``weight`` on ``target``'s array ``out``: the
    kernel's form (``ops/elementwise.py``, ``_lerp_values``) with its one branch a scalar weight
    selects for every element, version bump included."""
    w = np.asarray(weight, out.dtype)
    diff = np.subtract(end, out)
    if np.abs(w) < 0.5:
        np.multiply(diff, w, out=diff)
        np.add(out, diff, out=out)
    else:
        np.multiply(diff, 1 - w, out=diff)
        np.subtract(end, diff, out=out)
    target._counter().bump("lerp_")


def _moment_groups(optimizer: Any) -> Iterator[tuple[dict[str, Any], list[Any], float, float, Any, float, float]]:
    """The start of the Adam relatives' ``step`` (Adamax, NAdam, RAdam): each group with its
    parameters that have a gradient (``_groups_with_grads``) and its ``beta1, beta2, lr`` (a tensor
    lr read as a number), ``eps`` and ``weight_decay``."""
    for group, params in optimizer._groups_with_grads():
        beta1, beta2 = group["betas"]
        yield group, params, beta1, beta2, _lr_value(group["lr"]), group["eps"], group["weight_decay"]


def _plain_moments(p: Tensor, state: dict[str, Any], second: str,
                   beta1: float) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """``_plain_state`` for an Adam-family update (buffers ``exp_avg`` and ``second``), with its
    first step, ``exp_avg.lerp_(grad, 1 - beta1)``, done; None, with nothing done, as there.

    >>> import retrograd as rg
    >>> p = rg.zeros(2); p.grad = rg.ones(2)
    >>> state = {"step": rg.tensor(0.0), "exp_avg": rg.zeros(2), "exp_avg_sq": rg.zeros(2)}
    >>> _ = _plain_moments(p, state, "exp_avg_sq", 0.75); state["exp_avg"].tolist(), state["step"].item()
    ([0.25, 0.25], 1.0)
    """
    plain = _plain_state(p, state, "exp_avg", second)
    if plain is not None:
        _, (_, grad, m, _) = plain
        _lerp_into(state["exp_avg"], m, grad, 1 - beta1)  # exp_avg.lerp_(grad, 1 - beta1)
    return plain


def _decayed_moments(p: Tensor, state: dict[str, Any], second: str, beta1: float,
                     beta2: float) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """``_plain_moments`` and then ``state[second].mul_(beta2)``: the common start of Adamax's and
    RAdam's NumPy updates; None, with nothing done, as there.

    >>> import retrograd as rg
    >>> p = rg.zeros(2); p.grad = rg.ones(2)
    >>> state = {"step": rg.tensor(0.0), "exp_avg": rg.zeros(2), "exp_inf": rg.ones(2)}
    >>> _ = _decayed_moments(p, state, "exp_inf", 0.75, 0.5); state["exp_avg"].tolist(), state["exp_inf"].tolist()
    ([0.25, 0.25], [0.5, 0.5])
    """
    plain = _plain_moments(p, state, second, beta1)
    if plain is not None:
        _mul_into(state[second], plain[1][3], beta2)
    return plain
