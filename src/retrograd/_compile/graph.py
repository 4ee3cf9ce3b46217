"""The graph a trace records: values (numbered) and calls of ops' NumPy forwards on them.

A graph knows nothing of tensors: its inputs are arrays, each call is ``fn(*args, *params)``
with ``fn`` an op's NumPy forward (or a cast), and its outputs are values. ``compile/codegen.py``
turns one into straight-line Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ParamRef:
    """A param that is a traced array (``topk``'s indices handed to a backward op): a value."""

    v: int


@dataclass
class Call:
    """One op call: ``outs = fn(*args, *params)``; an arg is a value number or ``("const", k)``."""

    fn: Any
    label: str  # the op's name, for the generated source's comments
    args: list[Any]
    params: tuple[Any, ...]
    outs: list[int]  # one value per forward output (a tuple-returning forward has several)
    multi: bool  # the forward returns a tuple
    casts: dict[int, Any] = field(default_factory=dict)  # arg position -> dtype to cast it to first
    pure: bool = True  # may be merged with an identical call (False for random ops)


@dataclass
class Graph:
    """Values are ints; ``meta[v]`` is the (shape, dtype) the value had when traced."""

    inputs: list[int] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    consts: list[Any] = field(default_factory=list)
    meta: dict[int, tuple[tuple[int, ...], Any]] = field(default_factory=dict)
    next_value: int = 0

    def new_value(self, array: Any) -> int:
        v = self.next_value
        self.next_value += 1
        shape = getattr(array, "shape", ())
        self.meta[v] = (tuple(shape), getattr(array, "dtype", None))
        return v

    const_index: dict[int, int] = field(default_factory=dict)  # id(constant) -> its number

    def const(self, value: Any) -> tuple[str, int]:
        k = self.const_index.get(id(value))
        if k is None or self.consts[k] is not value:
            k = self.const_index[id(value)] = len(self.consts)
            self.consts.append(value)
        return ("const", k)
