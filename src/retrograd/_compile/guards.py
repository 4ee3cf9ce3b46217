"""Guards: what a compiled variant depends on, and the generated check of a variant's common call.

``CompiledFunction`` finds its variant by building a guard key (every argument's shape, dtype
and ``requires_grad``, the parameters of the modules it reaches walked through their
submodules...) and looking it up: about 10 µs per call for a small MLP. Once a variant has run,
``fast_guard`` writes one generated function that checks the same facts for that variant alone,
as a chain of ``is`` and ``==`` tests on the objects seen then (the argument types, the modules
the function reads from its closure or globals, each submodule's children, hooks, each parameter
and buffer object, their shapes, dtypes and flags, the grad modes) and returns the variant's flat
tensor inputs, or None when anything differs. It is only a shortcut: None sends the call down the
general path, which finds the variant (or compiles one) as before.

The modules a function reaches (``reached_modules``) are the ones Dynamo would find from its
frame: a compiled module itself, the object of a compiled bound method, modules in its closure
cells, in the globals it names or in the attributes of the object of a bound method (one level
into lists, tuples and dicts), and modules passed as arguments. Their parameters and buffers are
the graph's inputs, as a compiled module's are, so ``.grad`` lands on them as in eager.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.grad_mode import STATE
from ..nn.modules import module as _module_mod
from ..nn.modules.module import Module
from ..tensor import Tensor
from .codegen import exec_generated

__all__ = ["WHOLE", "any_hooks", "fast_guard", "named_values", "reached_modules", "read_source"]

WHOLE: Any = object()  # a source's ``sub`` when the name holds the value itself
# Where a value was read: (closure cell and None, or a dict and a key; an index or key into the
# container the name holds, or ``WHOLE``). None: a value fixed for the compiled function (the
# compiled module, the object of a compiled bound method).
Source = tuple[Any, Any, Any]


def named_values(fn: Any) -> list[tuple[Any, Source]]:
    """What ``fn`` can read without taking it, one level into lists, tuples and dicts, each with its
    source: its closure cells, the globals it names, and for a bound method the attributes of its
    object (unless that object is a module: its parameters are inputs already)."""
    values: list[tuple[Any, Any, Any]] = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            values.append((cell.cell_contents, cell, None))
        except ValueError:
            continue
    glob = getattr(fn, "__globals__", {})
    for name in getattr(getattr(fn, "__code__", None), "co_names", ()):
        if name in glob:
            values.append((glob[name], glob, name))
    owner = getattr(fn, "__self__", None)
    attrs = getattr(owner, "__dict__", None)
    if owner is not None and not isinstance(owner, Module) and type(attrs) is dict:
        values += [(v, attrs, name) for name, v in attrs.items()]
    found: list[tuple[Any, Source]] = []
    for v, holder, name in values:
        items = v.items() if type(v) is dict else enumerate(v) if type(v) in (list, tuple) else ((WHOLE, v),)
        found += [(x, (holder, name, sub)) for sub, x in items]
    return found


def read_source(source: Source) -> Any:
    """What ``source`` holds now (None if it no longer resolves)."""
    holder, name, sub = source
    try:
        value = holder.cell_contents if name is None else holder[name]
        return value if sub is WHOLE else value[sub]
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def reached_modules(fn: Any, module: Any, args: tuple[Any, ...]) -> list[tuple[Module, Source | None]]:
    """The root modules a call of ``fn`` reaches (see the module docstring), each once, with the
    source it was read from (None: fixed for this compiled function, or an argument, whose
    identity the guard key holds)."""
    roots: list[tuple[Module, Source | None]] = []
    seen: set[int] = set()

    def add(m: Module, source: Source | None) -> None:
        if id(m) not in seen:
            seen.add(id(m))
            roots.append((m, source))

    if module is not None:
        add(module, None)
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, Module):
        add(owner, None)
    for a in args:
        if isinstance(a, Module):
            add(a, None)
    reads = fn.forward if module is not None and fn is module else fn
    for v, source in named_values(reads):
        if isinstance(v, Module):
            add(v, source)
    return roots


def any_hooks(mods: list[tuple[Module, tuple[Any, ...]]]) -> bool:
    """Whether a module hook would run in a call: one of ``mods`` has forward, forward-pre or
    backward hooks, or a global module backward hook is registered."""
    return bool(_module_mod._global_backward_hooks or _module_mod._global_backward_pre_hooks) or any(
        m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or m._backward_pre_hooks for m, _ in mods)


def _source_test(source: Source, ns: dict[str, Any], k: int) -> str:
    """A Python expression for what ``source`` holds now, its objects bound in ``ns``."""
    holder, name, sub = source
    if sub is WHOLE:
        ns[f"_h{k}"] = holder
        return f"_h{k}.cell_contents" if name is None else f"_h{k}.get({name!r})"
    ns[f"_src{k}"], ns["_read_source"] = source, read_source
    return f"_read_source(_src{k})"


def fast_guard(roots: list[tuple[Module, Source | None]], mods: list[tuple[Any, tuple[Any, ...]]] | None,
               args: tuple[Any, ...], tensors: list[Tensor],
               lifted: list[Tensor]) -> Callable[[tuple[Any, ...]], list[Tensor] | None] | None:
    """A generated ``guard(args)`` for a call whose arguments are ``args`` (tensors and modules,
    no keywords) and whose flat inputs were ``tensors`` (the tensor arguments, then the reached
    modules' parameters and buffers); None when the call is not of that simple form.

    >>> import retrograd as rg
    >>> x = rg.ones(2)
    >>> guard = fast_guard([], None, (x,), [x], [])
    >>> guard((x,)) == [x], guard((rg.ones(3),)), guard((x, x))
    (True, None, None)
    """
    if not all(isinstance(a, (Tensor, Module)) for a in args):
        return None
    ns: dict[str, Any] = {"_S": STATE, "_M": _module_mod}
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

    tensor_args = []
    for i, a in enumerate(args):
        ns[f"_C{i}"] = a if isinstance(a, Module) else type(a)
        if isinstance(a, Module):
            lines.append(f"    if a{i} is not _C{i}:")  # (its structure is checked with the modules below)
            lines.append("        return None")
            continue
        lines.append(f"    if a{i}.__class__ is not _C{i}:")
        lines.append("        return None")
        check_tensor(f"a{i}", a)
        tensor_args.append(names[i])
    rest = tensors[len(tensor_args):]
    if roots:
        if mods is None:
            return None
        for k, (root, source) in enumerate(roots):  # a module rebound in the closure or globals
            if source is not None:
                ns[f"_R{k}"] = root
                lines.append(f"    if {_source_test(source, ns, k)} is not _R{k}:")
                lines.append("        return None")
        lines.append("    if _M._global_backward_hooks or _M._global_backward_pre_hooks:")
        lines.append("        return None")
        for j, (m, kids) in enumerate(mods):
            ns[f"_m{j}"] = m
            ns[f"_k{j}"] = kids
            lines.append(f"    if _m{j}.training is not {m.training!r} or _m{j}._forward_hooks or _m{j}._forward_pre_hooks "
                         f"or _m{j}._backward_hooks or _m{j}._backward_pre_hooks:")
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
    lines.append(f"    return [{', '.join(tensor_args)}{', ' if tensor_args else ''}*_rest]")
    return exec_generated("\n".join(lines) + "\n", "guard", ns, "guard")
