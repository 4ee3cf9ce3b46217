"""Straight-line guards: a compiled function's common call checked by generated code.

``CompiledFunction`` finds its variant by building a guard key (every argument's shape, dtype
and ``requires_grad``, the module's parameters walked through its submodules...) and looking it
up: about 10 µs per call for a small MLP. Once a variant has run, ``fast_guard`` writes one
generated function that checks the same facts for that variant alone, as a chain of ``is`` and
``==`` tests on the objects seen then (the argument types, each submodule's children, each
parameter and buffer object, their shapes, dtypes and flags, the grad modes) and returns the
variant's flat tensor inputs, or None when anything differs. It is only a shortcut: None sends
the call down the general path, which finds the variant (or compiles one) as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.grad_mode import STATE
from ..tensor import Tensor
from .codegen import exec_generated

__all__ = ["fast_guard"]


def fast_guard(module: Any, mods: list[tuple[Any, tuple[Any, ...]]] | None, args: tuple[Any, ...],
               tensors: list[Tensor], lifted: list[Tensor]) -> Callable[[tuple[Any, ...]], list[Tensor] | None] | None:
    """A generated ``guard(args)`` for a call whose arguments are ``args`` (all tensors, no
    keywords) and whose flat inputs were ``tensors`` (the arguments, then the module's parameters
    and buffers); None when the call is not of that simple form.

    >>> import retrograd as rg
    >>> x = rg.ones(2)
    >>> guard = fast_guard(None, None, (x,), [x], [])
    >>> guard((x,)) == [x], guard((rg.ones(3),)), guard((x, x))
    (True, None, None)
    """
    if not all(isinstance(a, Tensor) for a in args):
        return None
    ns: dict[str, Any] = {"_S": STATE}
    lines = ["def guard(args):",
             f"    if len(args) != {len(args)} or _S.grad_enabled != {STATE.grad_enabled!r} "
             f"or _S.inference != {bool(STATE.inference)!r}:",
             "        return None"]
    names = [f"a{i}" for i in range(len(args))]
    if args:
        lines.append(f"    {', '.join(names)}{',' if len(args) == 1 else ''} = args")

    def check_tensor(name: str, t: Tensor) -> None:
        k = len(ns)
        ns[f"_s{k}"], ns[f"_d{k}"] = t._data.shape, t._data.dtype
        lines.append(f"    _x = {name}._data")
        lines.append(f"    if _x.shape != _s{k} or _x.dtype != _d{k} or {name}._requires_grad is not {t._requires_grad!r}:")
        lines.append("        return None")

    for i, a in enumerate(args):
        ns[f"_C{i}"] = type(a)
        lines.append(f"    if a{i}.__class__ is not _C{i}:")
        lines.append("        return None")
        check_tensor(f"a{i}", a)
    rest = tensors[len(args):]
    if module is not None:
        if mods is None:
            return None
        for j, (m, kids) in enumerate(mods):
            ns[f"_m{j}"] = m
            ns[f"_k{j}"] = kids
            lines.append(f"    if _m{j}.training is not {m.training!r}:")
            lines.append("        return None")
            if kids:
                lines.append(f"    if tuple(_m{j}._modules.values()) != _k{j}:")  # (modules compare by identity)
            else:
                lines.append(f"    if _m{j}._modules:")
            lines.append("        return None")
            for attr in ("_parameters", "_buffers"):
                held = list(getattr(m, attr).values())
                if not held:
                    lines.append(f"    if _m{j}.{attr}:")
                    lines.append("        return None")
                    continue
                lines.append(f"    _v = tuple(_m{j}.{attr}.values())")
                tests = [f"len(_v) != {len(held)}"]
                for n, obj in enumerate(held):
                    ns[f"_o{j}{attr}{n}"] = obj
                    tests.append(f"_v[{n}] is not _o{j}{attr}{n}")
                lines.append(f"    if {' or '.join(tests)}:")
                lines.append("        return None")
    for n, t in enumerate(rest + lifted):  # (objects fixed by the tests above: their data may change)
        ns[f"_t{n}"] = t
        check_tensor(f"_t{n}", t)
    ns["_rest"] = rest
    lines.append(f"    return [{', '.join(names)}{', ' if names else ''}*_rest]")
    return exec_generated("\n".join(lines) + "\n", "guard", ns, "guard")
