"""The op database: one ``OpInfo`` per op, with sample inputs, a domain and PyTorch as reference.

The same entries drive gradcheck, gradgradcheck and PyTorch parity (tests/ops/test_opdb.py).
An entry's ``fn(lib, *args, **kwargs)`` is written once and run with ``lib`` = retrograd and with
``lib`` = torch: arrays in a sample become tensors of that library (floating ones require grad
unless ``grad`` says otherwise), other arguments pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Sample:
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    grad: tuple[bool, ...] | None = None  # per array arg: requires grad (default: floating arrays)
    name: str = ""


@dataclass
class OpInfo:
    name: str
    fn: Callable[..., Any]
    samples: Callable[[np.random.Generator], list[Sample]]
    covers: tuple[str, ...] = ()  # public names (functions, methods) this entry exercises
    gradcheck: bool = True
    gradgradcheck: bool = True
    parity: bool = True  # compare with real PyTorch
    check_node: bool = True  # compare grad_fn class names with PyTorch
    atol: float = 1e-5
    rtol: float = 1e-3
    parity_atol: float = 1e-6
    parity_rtol: float = 1e-5
    float32: bool = True  # also compare float32 forward values and dtypes with PyTorch

    def __post_init__(self) -> None:
        if not self.covers:
            self.covers = (self.name,)


def to_lib(lib: Any, sample: Sample, dtype: str = "float64") -> tuple[list[Any], dict[str, Any], list[Any]]:
    """Materialise a sample for ``lib``; returns args, kwargs and the tensors that require grad."""
    args: list[Any] = []
    leaves: list[Any] = []
    array_index = 0
    for a in sample.args:
        if isinstance(a, np.ndarray):
            wants = sample.grad[array_index] if sample.grad is not None else a.dtype.kind == "f"
            array_index += 1
            data = a.astype(dtype) if a.dtype.kind == "f" else a
            t = lib.tensor(np.array(data))
            if wants:
                t.requires_grad_()
                leaves.append(t)
            if sample.name == "noncontiguous" and t.dim() >= 2:
                t = t.transpose(0, 1)  # the op sees a strided view of the leaf
            args.append(t)
        elif isinstance(a, list) and a and all(isinstance(x, np.ndarray) for x in a):
            sub = []
            for x in a:
                t = lib.tensor(x.astype(dtype).tolist(), dtype=getattr(lib, dtype))
                t.requires_grad_()
                leaves.append(t)
                sub.append(t)
            args.append(sub)
        else:
            args.append(a)
    return args, dict(sample.kwargs), leaves


def uniform(rng: np.random.Generator, *shape: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return np.asarray(rng.uniform(low, high, size=shape))


def positive(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(0.2, 2.0, size=shape))


def away_from_zero(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Values with |x| >= 0.3: safe for ops with a kink at 0 (abs, relu, sign) under finite differences."""
    magnitude = rng.uniform(0.3, 2.0, size=shape)
    return np.asarray(magnitude * rng.choice([-1.0, 1.0], size=shape))


def distinct(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Well-separated values: max/min/sort have no near-ties for finite differences to cross."""
    n = int(np.prod(shape)) if shape else 1
    values = rng.permutation(n).astype(np.float64) * 0.5 - n / 4
    return values.reshape(shape)


def all_ops() -> list[OpInfo]:
    from . import core

    entries: list[OpInfo] = list(core.OPS)
    for module_name in ("elementwise", "reduce", "linalg", "shape", "nn", "conv"):
        try:
            module = __import__(f"{__name__}.{module_name}", fromlist=["OPS"])
        except ModuleNotFoundError:
            continue
        entries.extend(module.OPS)
    return entries
