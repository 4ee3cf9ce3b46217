"""The op database: ``OpInfo`` entries keyed by the public op name (``op``) and, when one op has
several call forms or domains, a ``variant_test_name`` (as PyTorch's OpInfo ``name`` +
``variant_test_name``), each with sample inputs, a domain and PyTorch as reference.

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
    # The op gets its arrays of 2+ dims as non-contiguous leaves, transposed (``_noncontiguous``).
    noncontiguous: bool = False


@dataclass
class OpInfo:
    op: str  # the public name of the op (function, method or operator) under test
    fn: Callable[..., Any]
    samples: Callable[[np.random.Generator], list[Sample]]
    variant_test_name: str = ""  # which call form or domain of ``op`` this entry tests ("" for the plain one)
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
            self.covers = (self.op,)

    @property
    def name(self) -> str:
        """The entry's unique key (test ids, sample seeds): ``op`` or ``op_variant``."""
        return f"{self.op}_{self.variant_test_name}" if self.variant_test_name else self.op


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
            t = _noncontiguous(lib, np.array(data)) if sample.noncontiguous else lib.tensor(np.array(data))
            if wants:
                t.requires_grad_()
                leaves.append(t)
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


def _noncontiguous(lib: Any, data: np.ndarray) -> Any:
    """``data`` (2+ dims) as a leaf tensor whose storage is not contiguous: given transposed (dims 0
    and 1: the op sees the shape ``data.swapaxes(0, 1)``), a strided view of a contiguous copy;
    where that view still counts as contiguous (size-1 dims), every other element of an array twice
    as long in its last dim of size > 1. Vectors and scalars stay as they are."""
    if data.ndim < 2:
        return lib.tensor(data)
    seen = data.swapaxes(0, 1)
    t = lib.tensor(data).transpose(0, 1)
    long_axes = [i for i, n in enumerate(seen.shape) if n > 1]
    if t.is_contiguous() and long_axes:
        axis = long_axes[-1]
        every_other = tuple(slice(None, None, 2) if i == axis else slice(None) for i in range(seen.ndim))
        t = lib.tensor(np.repeat(seen, 2, axis=axis))[every_other]
    return t.detach()  # a leaf (gradcheck perturbs it), not a view with a grad_fn


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


def gradcheck_cases() -> list[Any]:
    """``pytest.param(op, sample)`` for every sample of every op the database gradchecks, each op's
    samples drawn from a generator seeded by its name (the same samples in every test file)."""
    import zlib

    import pytest

    return [
        pytest.param(op, sample, id=f"{op.name}-{sample.name or i}")
        for op in all_ops()
        if op.gradcheck
        for i, sample in enumerate(op.samples(np.random.default_rng(zlib.crc32(op.name.encode()))))
    ]


def cases() -> list[Any]:
    """Every op's samples as pytest params (``op-sample`` ids), each op's draws seeded by its name:
    the one list the op-database tests parametrise over."""
    import zlib

    import pytest

    return [pytest.param(op, sample, id=f"{op.name}-{sample.name or i}")
            for op in all_ops()
            for i, sample in enumerate(op.samples(np.random.default_rng(zlib.crc32(op.name.encode()))))]


def graph_nodes(outputs: list[Any]) -> list[Any]:
    """Every node reachable from the outputs' nodes (iteratively)."""
    seen: set[int] = set()
    stack = [o.grad_fn for o in outputs if getattr(o, "grad_fn", None) is not None]
    found = []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        found.append(node)
        stack.extend(nxt for nxt, _ in node.next_functions)
    return found
