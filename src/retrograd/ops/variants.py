"""The public forms of op-table entries, derived from each entry's ``variants`` (PyTorch's
``variants:`` in ``native_functions.yaml``).

An entry declares which forms it has: ``"function"`` (``retrograd.<name>(input, ...)``),
``"method"`` (``Tensor.<name>(...)``) and ``"inplace"`` (``Tensor.<name>_(...)``, the name derived).
This module is the one binding point: the end of ``tensor.py`` calls ``bind_methods`` and
``_functions.py`` makes a function for each name ``function_names`` gives, so a new op with
declared variants is one entry plus its opdb sample. Only the eagerly imported topics are read
(``nn`` and ``linalg`` load on first use). A derived method passes an op's params
positionally (``x.foo(a, b)``); an op whose params want keywords or defaults keeps a hand-written
method.

The hot methods (``+ - * /``, ``exp``, ``tanh``...) are not bound here: ``tensor.py`` binds the
ops' own call paths to them directly, one frame shorter (``_set_operators``).

>>> import retrograd as rg
>>> from retrograd.ops import elementwise
>>> elementwise.exp2.variants
('function', 'method', 'inplace')
>>> rg.exp2(rg.tensor([3.0])).tolist(), rg.tensor([3.0]).exp2_().tolist()
([8.0], [8.0])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .op import Op, apply

FUNCTION, METHOD, INPLACE = "function", "method", "inplace"
# The topics whose entries are public at ``import retrograd`` (ops/__init__ imports them).
TOPICS = ("elementwise", "reduce", "shape", "indexing")


def declared(modules: Iterable[Any] | None = None) -> list[Op]:
    """The entries of ``modules`` (default: the eagerly imported topics) that declare variants,
    checked for one entry per public name.

    >>> from retrograd.ops import variants
    >>> "erf" in [op.name for op in variants.declared()]
    True
    """
    if modules is None:
        import importlib

        modules = [importlib.import_module(f"{__package__}.{topic}") for topic in TOPICS]
    entries: dict[str, Op] = {}
    for module in modules:
        for value in vars(module).values():
            if not isinstance(value, Op) or not getattr(value, "variants", ()):
                continue
            # (each entry's own variants were checked when it was declared: ops/declaration.py)
            other = entries.setdefault(value.name, value)
            if other is not value:
                raise ValueError(f"{value.name}: two entries declare variants under one public name")
    return list(entries.values())


def function_names(entries: Iterable[Op]) -> list[str]:
    """The ``retrograd.<name>`` functions the entries declare.

    >>> from retrograd.ops import variants
    >>> "erfinv" in variants.function_names(variants.declared())
    True
    """
    return [op.name for op in entries if FUNCTION in op.variants]


def _form(run: Callable[[Op, tuple[Any, ...]], Any], op: Op) -> Callable[..., Any]:
    # Exactly what a hand-written ``return _apply(op, (self, ...))`` method did: one frame
    # (``run`` is ``apply``, or ``apply_inplace`` for the in-place form).
    def method(self: Any) -> Any:
        return run(op, (self,))

    def with_params(self: Any, *params: Any) -> Any:
        return run(op, (self, *params))

    return method if op.n_args == 1 else with_params


def bind_methods(cls: type, entries: Iterable[Op]) -> None:
    """Set ``cls.<name>`` and ``cls.<name>_`` for the entries' ``method`` and ``inplace`` variants;
    a name the class already defines is an error (one definition per op).

    >>> import retrograd as rg
    >>> rg.Tensor.erfc.__qualname__
    'Tensor.erfc'
    """
    from .inplace import apply_inplace  # ops.inplace imports the Tensor this binds to

    for op in entries:
        forms = []
        if METHOD in op.variants:
            forms.append((op.name, _form(apply, op)))
        if INPLACE in op.variants:
            forms.append((op.name + "_", _form(apply_inplace, op)))
        for name, method in forms:
            if name in vars(cls):
                raise ValueError(f"{cls.__name__}.{name} is defined by hand and by the {op.name!r} entry's variants")
            method.__name__ = name
            method.__qualname__ = f"{cls.__name__}.{name}"
            setattr(cls, name, method)
