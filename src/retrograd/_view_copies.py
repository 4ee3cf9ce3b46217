"""PyTorch's ``*_copy`` functions (``torch.permute_copy``, ``torch.select_copy``, ...): the view op's
result as a new tensor that shares no memory with its input.

Each takes the view's own public form (its argument handling and errors) and copies the result;
the view's node, renamed as PyTorch names it (``PermuteBackward0_copy``; ``NarrowCopyBackward0``),
becomes the copy's one node, as in PyTorch (no second node behind it). ``diagonal_copy`` is the op table's own
entry. Loaded on first use.
"""

from __future__ import annotations

from typing import Any

from ._complex import _tensor  # (the one "must be Tensor" check of these functions)
from .autograd.forward_ad import DUAL
from .ops.op import Op, apply
from .tensor import Tensor

_COPY_OPS: dict[str, Op] = {}


def _copy_op(node: str) -> Op:
    op = _COPY_OPS.get(node)
    if op is None:  # one identity-gradient copy entry per view node name, made on first use
        op = _COPY_OPS[node] = Op(f"copy_of_{node}", lambda x: x.copy(), node=node,
                                  grads=(lambda grad: grad,), jvp="linear")
    return op


_COPY_CLASSES: dict[tuple[type, str], type] = {}
_RENAMED: set[type] = set()  # (the classes above: a node already renamed)


def _copied(view: Tensor, node: str | None = None) -> Tensor:
    fn = view._grad_fn
    name = node or (f"{type(fn).__name__}_copy" if fn is not None else "")
    if fn is None:  # (nothing to record: a plain copy of the data, and its tangent's copy)
        return _with_tangent(view, Tensor._make(view._data.copy()), name)
    if view._base is not None and fn is view._base._grad_fn:  # (no node of its own: copy through one)
        return apply(_copy_op(name), (view,))  # type: ignore[no-any-return]
    # One node, as PyTorch records: the view's own node (made by this call, seen by no one else),
    # renamed ``PermuteBackward0_copy``, now the grad_fn of a fresh tensor that owns its data.
    if type(fn).__name__ != name and type(fn) not in _RENAMED:  # (unbind's pieces: renamed once)
        key = (type(fn), name)
        cls = _COPY_CLASSES.get(key)
        if cls is None:
            cls = _COPY_CLASSES[key] = type(name, (type(fn),), {"__slots__": ()})
            _RENAMED.add(cls)
        fn.__class__ = cls
    out = Tensor._make(view._data.copy(), True)
    out._grad_fn = fn
    out._output_nr = view._output_nr
    return _with_tangent(view, out, name)


def _with_tangent(view: Tensor, out: Tensor, name: str) -> Tensor:
    """``out`` (``view``'s data, copied) given the copy of ``view``'s tangent, as PyTorch's forward AD
    gives a ``*_copy``: the view's tangent, contiguous and its own (the copy entry's linear JVP)."""
    if DUAL[0] is not None:  # (no dual level: nothing to carry, at no cost)
        from .ops.forward import propagate

        propagate(_copy_op(name or "CloneBackward0"), (view,), (), out)
    return out


def alias_copy(input: Tensor) -> Tensor:  # noqa: A002
    """A copy of ``input`` (``alias``'s copying form).

    >>> import retrograd as torch
    >>> x = torch.ones(2)
    >>> y = torch.alias_copy(x)
    >>> y.data_ptr() != x.data_ptr()
    True
    """
    from .ops.shape import alias

    return _copied(apply(alias, (_tensor("alias_copy", input),)))


def as_strided_copy(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:  # noqa: A002
    """``input.as_strided(size, stride, storage_offset)``, copied.

    >>> import retrograd as torch
    >>> torch.as_strided_copy(torch.arange(4.0), (2, 2), (1, 2))
    tensor([[0., 2.],
            [1., 3.]])
    """
    return _copied(_tensor("as_strided_copy", input).as_strided(size, stride, storage_offset))  # type: ignore[attr-defined]


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """``input.diagonal(offset, dim1, dim2)``, copied.

    >>> import retrograd as torch
    >>> torch.diagonal_copy(torch.eye(2))
    tensor([1., 1.])
    """
    from .ops import shape as _S

    x = _tensor("diagonal_copy", input)
    d1, d2 = _S._check_diagonal_dims(x._data.ndim, dim1, dim2)
    return apply(_S.diagonal_copy, (x, int(offset), d1, d2))  # type: ignore[no-any-return]


def expand_copy(input: Tensor, size: Any, *, implicit: bool = False) -> Tensor:  # noqa: A002
    """``input.expand(size)``, copied (the result owns every element).

    >>> import retrograd as torch
    >>> torch.expand_copy(torch.tensor([1.0, 2.0]), (2, 2))
    tensor([[1., 2.],
            [1., 2.]])
    """
    return _copied(_tensor("expand_copy", input).expand(size))


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:  # noqa: A002
    """``input.narrow(dim, start, length)``, copied (PyTorch's ``NarrowCopyBackward0``).

    >>> import retrograd as torch
    >>> torch.narrow_copy(torch.arange(5.0), 0, 1, 2)
    tensor([1., 2.])
    """
    return _copied(_tensor("narrow_copy", input).narrow(dim, start, length), "NarrowCopyBackward0")


def permute_copy(input: Tensor, dims: Any) -> Tensor:  # noqa: A002
    """``input.permute(dims)``, copied.

    >>> import retrograd as torch
    >>> torch.permute_copy(torch.zeros(2, 3), (1, 0)).shape
    torch.Size([3, 2])
    """
    return _copied(_tensor("permute_copy", input).permute(dims))


def select_copy(input: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """``input.select(dim, index)``, copied.

    >>> import retrograd as torch
    >>> torch.select_copy(torch.arange(4.0).view(2, 2), 0, 1)
    tensor([2., 3.])
    """
    return _copied(_tensor("select_copy", input).select(dim, index))


def slice_copy(input: Tensor, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Tensor:  # noqa: A002
    """``input[..., start:end:step, ...]`` along ``dim``, copied.

    >>> import retrograd as torch
    >>> torch.slice_copy(torch.arange(5.0), 0, 1, 4, 2)
    tensor([1., 3.])
    """
    from .ops.reduce import normalize_dim

    x = _tensor("slice_copy", input)
    key = [slice(None)] * normalize_dim(dim, x._data.ndim) + [slice(start, end, step)]
    return _copied(x[tuple(key)], "SliceBackward0_copy")  # (a whole-dim slice indexes as an alias)


def split_copy(input: Tensor, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``input.split(split_size, dim)``, each piece copied.

    >>> import retrograd as torch
    >>> torch.split_copy(torch.arange(3.0), 2)
    (tensor([0., 1.]), tensor([2.]))
    """
    return tuple(_copied(p) for p in _tensor("split_copy", input).split(split_size, dim))


def split_with_sizes_copy(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``input.split_with_sizes(split_sizes, dim)``, each piece copied.

    >>> import retrograd as torch
    >>> torch.split_with_sizes_copy(torch.arange(3.0), [1, 2])
    (tensor([0.]), tensor([1., 2.]))
    """
    return tuple(_copied(p) for p in _tensor("split_with_sizes_copy", input).split_with_sizes(split_sizes, dim))


def squeeze_copy(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """``input.squeeze(dim)``, copied.

    >>> import retrograd as torch
    >>> torch.squeeze_copy(torch.zeros(1, 2)).shape
    torch.Size([2])
    """
    x = _tensor("squeeze_copy", input)
    return _copied(x.squeeze() if dim is None else x.squeeze(dim))


def t_copy(input: Tensor) -> Tensor:  # noqa: A002
    """``input.t()``, copied.

    >>> import retrograd as torch
    >>> torch.t_copy(torch.zeros(2, 3)).shape
    torch.Size([3, 2])
    """
    return _copied(_tensor("t_copy", input).t())


def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    """``input.transpose(dim0, dim1)``, copied.

    >>> import retrograd as torch
    >>> torch.transpose_copy(torch.zeros(2, 3), 0, 1).shape
    torch.Size([3, 2])
    """
    return _copied(_tensor("transpose_copy", input).transpose(dim0, dim1))


def unbind_copy(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``input.unbind(dim)``, each slice copied.

    >>> import retrograd as torch
    >>> torch.unbind_copy(torch.eye(2))
    (tensor([1., 0.]), tensor([0., 1.]))
    """
    return tuple(_copied(p) for p in _tensor("unbind_copy", input).unbind(dim))


def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:  # noqa: A002
    """``input.unfold(dimension, size, step)``, copied.

    >>> import retrograd as torch
    >>> torch.unfold_copy(torch.arange(4.0), 0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    return _copied(_tensor("unfold_copy", input).unfold(dimension, size, step))  # type: ignore[attr-defined]


def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """``input.unsqueeze(dim)``, copied.

    >>> import retrograd as torch
    >>> torch.unsqueeze_copy(torch.zeros(2), 0).shape
    torch.Size([1, 2])
    """
    return _copied(_tensor("unsqueeze_copy", input).unsqueeze(dim))


def view_copy(input: Tensor, size: Any) -> Tensor:  # noqa: A002
    """``input.view(size)`` (or ``input.view(dtype)``), copied.

    >>> import retrograd as torch
    >>> torch.view_copy(torch.zeros(2, 3), (3, 2)).shape
    torch.Size([3, 2])
    """
    return _copied(_tensor("view_copy", input).view(size))


def view_as_real_copy(input: Tensor) -> Tensor:  # noqa: A002
    """``view_as_real(input)``, copied.

    >>> import retrograd as torch
    >>> torch.view_as_real_copy(torch.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    from .ops.complex import view_as_real

    return _copied(apply(view_as_real, (_tensor("view_as_real_copy", input),)))


def view_as_complex_copy(input: Tensor) -> Tensor:  # noqa: A002
    """``view_as_complex(input)``, copied.

    >>> import retrograd as torch
    >>> torch.view_as_complex_copy(torch.tensor([[1.0, 2.0]]))
    tensor([1.+2.j])
    """
    from .autograd.grad_mode import is_grad_enabled
    from .ops.complex import view_as_complex

    x = _tensor("view_as_complex_copy", input)
    if x._requires_grad and is_grad_enabled():  # (PyTorch has no backward for this copy's complex output)
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for outputs with complex "
                           "dtype.")
    return _copied(apply(view_as_complex, (x,)))


def _detach_copy_backward(grad: Any) -> Any:
    raise RuntimeError("derivative for aten::detach_copy is not implemented")


def _detach_copy_jvp(tangents: Any, inputs: Any, params: Any, outputs: Any) -> Any:
    raise NotImplementedError("Trying to use forward AD with aten::detach_copy that does not support it.")


# PyTorch records a node for it whose backward is not implemented (not a detached result): so do we.
_detach_copy = Op("detach_copy", lambda x: x.copy(), node="NotImplemented", grads=(_detach_copy_backward,),
                  jvp=_detach_copy_jvp)


def detach_copy(input: Tensor) -> Tensor:  # noqa: A002
    """``input.detach()``'s data as a new tensor; as in PyTorch, a result that requires grad has a
    ``NotImplemented`` node (backward through it raises) and forward AD through it raises.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0])
    >>> y = torch.detach_copy(x)
    >>> y, y.data_ptr() != x.data_ptr()
    (tensor([1., 2.]), True)
    """
    return apply(_detach_copy, (_tensor("detach_copy", input),))  # type: ignore[no-any-return]


NAMES = ("alias_copy", "as_strided_copy", "diagonal_copy", "expand_copy", "narrow_copy", "permute_copy",
         "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
         "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy", "view_as_real_copy",
         "view_as_complex_copy", "detach_copy")
