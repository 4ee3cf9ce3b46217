"""The nested containers the transforms take and return: dicts, lists, tuples (named tuples
too) of leaves. Iterative, so a deep structure cannot reach Python's recursion limit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# A spec is None for a leaf, else (kind, keys, children): kind is the container type, keys the
# dict keys (in order), children the specs of its items.
Spec = Any


def _is_node(x: Any) -> bool:
    return isinstance(x, (list, tuple, dict))  # (named tuples and torch.Size too, as PyTorch's pytree)


def tree_flatten(tree: Any) -> tuple[list[Any], Spec]:
    """The leaves of ``tree`` in order, and its structure.

    >>> tree_flatten({"a": 1, "b": [2, (3,)]})[0]
    [1, 2, 3]
    """
    leaves: list[Any] = []
    root: list[Any] = [None]
    stack: list[tuple[Any, list[Any], int]] = [(tree, root, 0)]
    while stack:
        x, parent, slot = stack.pop()
        if not _is_node(x):
            leaves.append(x)
            parent[slot] = None
            continue
        items = list(x.values()) if isinstance(x, dict) else list(x)
        children: list[Any] = [None] * len(items)
        parent[slot] = (type(x), tuple(x.keys()) if isinstance(x, dict) else None, children)
        for i in range(len(items) - 1, -1, -1):
            stack.append((items[i], children, i))
    return leaves, root[0]


def tree_unflatten(leaves: list[Any], spec: Spec) -> Any:
    """The inverse of ``tree_flatten``.

    >>> leaves, spec = tree_flatten({"a": 1, "b": [2, 3]})
    >>> tree_unflatten([x * 10 for x in leaves], spec)
    {'a': 10, 'b': [20, 30]}
    """
    it = iter(leaves)
    # Post-order: build children before their container.
    out: list[Any] = [None]
    stack: list[tuple[Spec, list[Any], int, bool]] = [(spec, out, 0, False)]
    built: dict[int, list[Any]] = {}
    while stack:
        s, parent, slot, ready = stack.pop()
        if s is None:
            parent[slot] = next(it)
            continue
        kind, keys, children = s
        if not ready:
            values: list[Any] = [None] * len(children)
            built[id(s)] = values
            stack.append((s, parent, slot, True))
            for i in range(len(children) - 1, -1, -1):
                stack.append((children[i], values, i, False))
            continue
        values = built.pop(id(s))
        if kind is dict or (isinstance(kind, type) and issubclass(kind, dict)):
            parent[slot] = kind(zip(keys, values))
        elif kind is list:
            parent[slot] = values
        elif kind is tuple:
            parent[slot] = tuple(values)
        elif hasattr(kind, "_fields"):  # a named tuple
            parent[slot] = kind(*values)
        else:
            parent[slot] = kind(values)
    return out[0]


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``fn`` applied to each leaf.

    >>> tree_map(lambda v: v + 1, (1, [2]))
    (2, [3])
    """
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(v) for v in leaves], spec)


def spec_repr(spec: Spec) -> str:
    """The structure as PyTorch's messages print it: ``{'a': *, 'b': [*]}``.

    >>> spec_repr(tree_flatten(((1, 2), [3]))[1])
    '((*, *), [*])'
    """
    if spec is None:
        return "*"
    kind, keys, children = spec
    parts = [spec_repr(c) for c in children]  # (recursion over the structure's depth only)
    if keys is not None:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts)) + "}"
    if kind is list:
        return "[" + ", ".join(parts) + "]"
    if len(parts) == 1 and kind is tuple:
        return f"({parts[0]},)"
    return "(" + ", ".join(parts) + ")"


def treespec_repr(spec: Spec, indent: int = 0) -> str:
    """The structure as PyTorch's ``TreeSpec`` prints in vmap's messages:
    ``TreeSpec(tuple, None, [*,\\n  *])``.

    >>> treespec_repr(tree_flatten((1, {"a": 2}))[1])
    "TreeSpec(tuple, None, [*,\\n  TreeSpec(dict, ['a'], [*])])"
    """
    if spec is None:
        return "*"
    kind, keys, children = spec
    context = None if keys is None else list(keys)
    if kind not in (list, tuple, dict):
        context = None
    inner = ""
    if children:
        indent += 2
        inner = treespec_repr(children[0], indent) + ("," if len(children) > 1 else "")
        inner += ",".join("\n" + " " * indent + treespec_repr(c, indent) for c in children[1:])
    return f"TreeSpec({kind.__name__}, {context}, [{inner}])"
