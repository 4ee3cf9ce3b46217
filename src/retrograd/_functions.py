"""The ``retrograd.<op>(tensor, ...)`` functions: PyTorch's functional spellings of the Tensor
methods, plus a few that take several tensors (``cat``, ``stack``, ``where``, ``allclose``).

First the name tuples (one per topic) and the entries' declared ``function`` variants, then the
hand-written functions, one block per topic: elementwise, reductions, shape and linear algebra,
predicates. ``__all__`` is derived last."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ._dtype import get_default_dtype
from .ops import shape as _shape
from .ops import variants as _variants
from .ops.elementwise import where as _where_op
from .ops.op import apply, broadcast_error
from .tensor import Tensor, _as_tensor_like, _operand

# An integer template: numbers become int64, floats the default float dtype (as torch.tensor).
_NUMBER_TEMPLATE = Tensor._make(np.zeros(0, np.int64))


def _t(x: Any, name: str | None = None) -> Tensor:
    """``x`` as a tensor: a number becomes one; for the function ``name``, anything else is
    PyTorch's TypeError (``sin([1.0])`` is not ``sin(tensor([1.0]))``)."""
    if isinstance(x, Tensor):
        return x
    if name is not None and not isinstance(x, (int, float, complex, np.generic)):
        kind = type(x)
        spelled = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {spelled}")
    return _as_tensor_like(x, _NUMBER_TEMPLATE)


def _method(name: str) -> Any:
    def function(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        return getattr(_t(input, name), name)(*args, **kwargs)

    function.__name__ = name
    function.__qualname__ = name
    function.__doc__ = (
        f"``retrograd.{name}(input, ...)`` is ``input.{name}(...)``.\n\n"
        f"    >>> import retrograd as rg\n    >>> callable(rg.{name})\n    True\n"
    )
    return function


_METHOD_FUNCTIONS = (
    "div divide true_divide masked_fill sum mean max min argmax "
    "argmin norm reshape flatten ravel transpose swapaxes swapdims permute squeeze unsqueeze narrow select "
    "unbind gather scatter scatter_add softmax log_softmax mm mv dot bmm clone "
    "eq ne numel"
).split()
# Each topic lists its own functional spellings of Tensor methods here.
_ELEMENTWISE_FUNCTIONS: tuple[str, ...] = tuple("square round frexp".split())
# PyTorch's in-place functions (``torch.exp_(x)`` is ``x.exp_()``).
_ELEMENTWISE_INPLACE_FUNCTIONS: tuple[str, ...] = tuple(
    "abs_ acos_ arccos_ acosh_ arccosh_ asin_ arcsin_ asinh_ arcsinh_ atan_ arctan_ atanh_ arctanh_ "
    "ceil_ clamp_ clamp_min_ clamp_max_ clip_ cos_ cosh_ deg2rad_ rad2deg_ erf_ erfc_ exp_ exp2_ expm1_ fill_ "
    "fix_ floor_ frac_ gcd_ lcm_ i0_ ldexp_ log_ log10_ log1p_ log2_ logit_ nan_to_num_ neg_ negative_ "
    "reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_".split()
)
_REDUCTION_FUNCTIONS: tuple[str, ...] = tuple(
    "prod var std sort argsort msort topk kthvalue median nanmedian mode cumsum cumprod nansum nanmean "
    "aminmax cummax cummin bincount histogram unique unique_consecutive diff cov corrcoef quantile nanquantile".split()
)
_SHAPE_FUNCTIONS: tuple[str, ...] = tuple(
    "flip fliplr flipud roll tile movedim moveaxis unflatten split split_with_sizes chunk tensor_split hsplit "
    "vsplit dsplit index_add take_along_dim nonzero argwhere broadcast_to index_put index_put_ nonzero_static "
    "diagonal diag diag_embed".split()
)
_LINALG_FUNCTIONS: tuple[str, ...] = tuple(
    "vdot outer ger inner kron addmm addmv baddbmm trace det logdet slogdet inverse cholesky matrix_power svd "
    "addr addbmm addmv_ pinverse matrix_exp".split()
)

for _name in (*_METHOD_FUNCTIONS, *_ELEMENTWISE_FUNCTIONS, *_ELEMENTWISE_INPLACE_FUNCTIONS, *_REDUCTION_FUNCTIONS, *_SHAPE_FUNCTIONS,
              *_LINALG_FUNCTIONS):
    globals()[_name] = _method(_name)
del _name

# The entries' declared "function" variants, with their declared signatures (the op table's
# binding point: ops/variants.py), each made on first lookup by the ``__getattr__`` it sets here.
_VARIANT_FUNCTIONS: tuple[str, ...] = tuple(_variants.bind_functions(globals(), _variants.declared(), _t, _operand))

if TYPE_CHECKING:  # (bound just above from the op table; named here for the type checker)
    def isnan(input: Tensor) -> Tensor: ...  # noqa: A002
    def isinf(input: Tensor) -> Tensor: ...  # noqa: A002
    def isfinite(input: Tensor) -> Tensor: ...  # noqa: A002
    def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
                equal_nan: bool = False) -> Tensor: ...


# -- elementwise functions over several tensors or with a number first (pow ... where) --------


def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001, A002
    """``input ** exponent``; ``input`` may be a Python number when ``exponent`` is a tensor.

    >>> import retrograd as rg
    >>> rg.pow(2, rg.tensor([1.0, 3.0])).tolist()
    [2.0, 8.0]
    """
    if isinstance(input, Tensor):
        return input.pow(exponent)
    return _t(exponent).__rpow__(input)  # type: ignore[no-any-return]


def float_power(input: Any, exponent: Any) -> Tensor:  # noqa: A002
    """``pow`` computed in double precision: both operands are cast to float64, or to complex128
    when either is complex.

    >>> import retrograd as rg
    >>> rg.float_power(rg.tensor([2.0]), 2).dtype
    torch.float64
    >>> rg.float_power(rg.tensor([1j]), 2).dtype
    torch.complex128
    """
    from ._dtype import complex128, float64

    if isinstance(input, Tensor):
        return input.float_power(exponent)
    exponent = _t(exponent)
    if isinstance(input, complex) or exponent.is_complex():
        return pow(complex(input), exponent.to(complex128))
    return pow(float(input), exponent.to(float64))


def remainder(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Python's modulus (the result has the divisor's sign); ``input`` may be a number.

    >>> import retrograd as rg
    >>> rg.remainder(rg.tensor([-3.0, 5.0]), 2).tolist()
    [1.0, 1.0]
    """
    if isinstance(input, Tensor):
        return input.remainder(other)
    return _t(other).__rmod__(input)  # type: ignore[no-any-return]


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``other - alpha * input``.

    >>> import retrograd as rg
    >>> rg.rsub(rg.tensor([1.0, 2.0]), 5.0).tolist()
    [4.0, 3.0]
    """
    from ._dtype import result_type
    from .ops import elementwise as _e

    other = _operand(other)
    x = _t(input)
    if isinstance(other, Tensor):
        return apply(_e.rsub_tensor, (x, other, alpha))  # type: ignore[no-any-return]
    if type(alpha) is float and result_type((x, other)).kind in "iu":  # alpha must not promote
        raise RuntimeError(_e.INTEGRAL_ALPHA_ERROR)
    return apply(_e.rsub, (x, other, alpha))  # type: ignore[no-any-return]











def polygamma(n: int, input: Tensor) -> Tensor:  # noqa: A002
    """The ``n``-th derivative of digamma (``n`` first, as PyTorch).

    >>> import retrograd as rg
    >>> f"{rg.polygamma(1, rg.tensor([1.0], dtype=rg.float64)).item():.6f}"  # pi^2 / 6
    '1.644934'
    """
    if type(n) is not int:
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    return _t(input).polygamma(n)  # type: ignore[attr-defined,no-any-return]


def xlogy(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN); either may be a number.

    >>> import retrograd as rg
    >>> rg.xlogy(rg.tensor([0.0, 2.0]), rg.tensor([0.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    from .ops import elementwise as _e

    if isinstance(input, Tensor):
        return input.xlogy(other)  # type: ignore[attr-defined,no-any-return]
    other = _operand(other)
    if not isinstance(other, Tensor):
        raise TypeError("xlogy() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__})")
    return apply(_e.xlogy_scalar_self, (other, _operand(input)))  # type: ignore[no-any-return]


def fill(input: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A new tensor like ``input`` filled with ``value`` (a number or a 0-d tensor, which gets the
    gradient's sum).

    >>> import retrograd as rg
    >>> rg.fill(rg.zeros(2), 3.0).tolist()
    [3.0, 3.0]
    """
    from .ops import elementwise as _e
    from .tensor import FILL_VALUE_ERROR, _scalar_value, _zero_dim_value

    if isinstance(value, Tensor):
        return apply(_e.fill_tensor_out, (input, _zero_dim_value(value, FILL_VALUE_ERROR)))  # type: ignore[no-any-return]
    return apply(_e.fill_out, (input, _scalar_value(value)))  # type: ignore[no-any-return]


def maximum(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise maximum; tied elements share the gradient.

    >>> import retrograd as rg
    >>> rg.maximum(rg.tensor([1., 5.]), rg.tensor([3., 2.])).tolist()
    [3.0, 5.0]
    """
    from .ops import maximum as _maximum

    return _maximum(_t(input), _operand(other))  # type: ignore[no-any-return]


def minimum(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise minimum; tied elements share the gradient.

    >>> import retrograd as rg
    >>> rg.minimum(rg.tensor([1., 5.]), rg.tensor([3., 2.])).tolist()
    [1.0, 2.0]
    """
    from .ops import minimum as _minimum

    return _minimum(_t(input), _operand(other))  # type: ignore[no-any-return]


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:  # noqa: A002
    """``input`` where ``condition`` holds, else ``other`` (broadcast; numbers allowed).

    >>> import retrograd as rg
    >>> rg.where(rg.tensor([True, False]), 1.0, 0.0).tolist()
    [1.0, 0.0]
    """
    if input is None and other is None:
        return tuple(Tensor._make(i) for i in np.nonzero(condition._data))
    return apply(_where_op, (condition, _operand(input), _operand(other)))


# -- reductions with several outputs or no method ---------------------------------------------


def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim`` in one pass (a plain tuple, as in PyTorch).

    >>> import retrograd as rg
    >>> v, m = rg.var_mean(rg.tensor([1.0, 2.0, 3.0]))
    >>> v.item(), m.item()
    (1.0, 2.0)
    """
    from .ops import reduce as _r

    return tuple(apply(_r.var_mean, input._var_args(dim, unbiased, keepdim, correction)))  # type: ignore[return-value]


def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim`` in one pass (a plain tuple, as in PyTorch).

    >>> import retrograd as rg
    >>> s, m = rg.std_mean(rg.tensor([1.0, 3.0]), unbiased=False)
    >>> s.item(), m.item()
    (1.0, 2.0)
    """
    from .ops import reduce as _r

    return tuple(apply(_r.std_mean, input._var_args(dim, unbiased, keepdim, correction)))  # type: ignore[return-value]


def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoid rule along ``dim``, with sample points ``x`` or a constant spacing ``dx`` (1).

    >>> import retrograd as rg
    >>> rg.trapezoid(rg.tensor([1.0, 2.0, 3.0])).item()
    4.0
    """
    from .ops import reduce as _r

    return _r.trapezoid(y, x, dx=dx, dim=dim)


def trapz(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """``trapezoid`` under its older name.

    >>> import retrograd as rg
    >>> rg.trapz(rg.tensor([1.0, 3.0]), dx=2.0).item()
    4.0
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The running trapezoid rule along ``dim``.

    >>> import retrograd as rg
    >>> rg.cumulative_trapezoid(rg.tensor([1.0, 2.0, 3.0])).tolist()
    [1.5, 4.0]
    """
    from .ops import reduce as _r

    return _r.cumulative_trapezoid(y, x, dx=dx, dim=dim)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple[Tensor, ...]:  # noqa: A002
    """Estimated derivatives of ``input`` along each dim (central differences inside).

    >>> import retrograd as rg
    >>> [t.tolist() for t in rg.gradient(rg.tensor([1.0, 4.0, 9.0, 16.0]))]
    [[3.0, 4.0, 6.0, 7.0]]
    """
    from .ops import reduce as _r

    return _r.gradient(input, spacing=spacing, dim=dim, edge_order=edge_order)


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates of flat ``indices`` in a tensor of ``shape``, one tensor per dim.

    >>> import retrograd as rg
    >>> [t.tolist() for t in rg.unravel_index(rg.tensor([4, 7]), (2, 4))]
    [[1, 1], [0, 3]]
    """
    from .ops import indexing as _i

    return _i.unravel_index(indices, shape)


def cross(input: Tensor, other: Tensor, dim: int | None = None, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (without it, the first dim of size 3, with
    PyTorch's deprecation warning); ``out``: a tensor the result is written into, as ``linalg.cross``'s.

    >>> import retrograd as rg
    >>> rg.cross(rg.tensor([1.0, 0.0, 0.0]), rg.tensor([0.0, 1.0, 0.0]), dim=0).tolist()
    [0.0, 0.0, 1.0]
    """
    from .ops import linalg as _l

    return _l.cross(input, other, dim, out=out)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of ``elements`` occurs in ``test_elements`` (either may be a number).

    >>> import retrograd as rg
    >>> rg.isin(rg.tensor([1, 2, 3]), rg.tensor([2, 5])).tolist()
    [False, True, False]
    """
    from .ops import indexing as _i

    return _i.isin(elements, test_elements, assume_unique=assume_unique, invert=invert)


def _values_array(values: Any, boundaries: Tensor) -> np.ndarray:
    return values._data if isinstance(values, Tensor) else _as_tensor_like(values, _NUMBER_TEMPLATE)._data


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False, right: bool = False,  # noqa: A002
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """Where ``input``'s values would be inserted in the last dim of ``sorted_sequence`` (int64
    indices, int32 with ``out_int32``; ``right``/``side='right'`` after equal values).

    >>> import retrograd as rg
    >>> rg.searchsorted(rg.tensor([1.0, 3.0, 5.0]), rg.tensor([3.0, 6.0])).tolist()
    [1, 3]
    """
    from .ops import reduce as _r

    flag = _r.searchsorted_side(right, side)
    return Tensor._make(_r.searchsorted_array(sorted_sequence._data, _values_array(input, sorted_sequence), flag,
                                              bool(out_int32), None if sorter is None else sorter._data))


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:  # noqa: A002
    """The bucket of each value of ``input`` among the 1-D ``boundaries``.

    >>> import retrograd as rg
    >>> rg.bucketize(rg.tensor([0.5, 2.0, 9.0]), rg.tensor([1.0, 2.0, 3.0]), right=True).tolist()
    [0, 2, 3]
    """
    from .ops import reduce as _r

    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return Tensor._make(_r.searchsorted_array(boundaries._data, _values_array(input, boundaries), bool(right),
                                              bool(out_int32), None))






# -- shape and linear-algebra functions over several tensors ------------------------------------


def einsum(*args: Any) -> Tensor:
    """Einstein summation over the operands' labelled dims.

    >>> import retrograd as rg
    >>> rg.einsum("ij,j->i", rg.ones(2, 3), rg.ones(3)).tolist()
    [3.0, 3.0]
    """
    from .ops import linalg as _linalg

    return _linalg.einsum(*args)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Sum of products over ``dims`` (a count of trailing/leading dims, or two lists of dims).

    >>> import retrograd as rg
    >>> rg.tensordot(rg.ones(2, 3), rg.ones(3, 4), dims=1).shape
    torch.Size([2, 4])
    """
    from .ops import linalg as _linalg

    return _linalg.tensordot(a, b, dims)


def broadcast_shapes(*shapes: Any) -> Any:
    """The shape all ``shapes`` broadcast to.

    >>> import retrograd as rg
    >>> rg.broadcast_shapes((2, 1), (3,))
    torch.Size([2, 3])
    """
    from .tensor import Size

    return Size(_shape.broadcast_shapes(*shapes))


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Expand the tensors to their common shape (those already of that shape are returned as they are).

    >>> import retrograd as rg
    >>> [t.shape for t in rg.broadcast_tensors(rg.ones(2, 1), rg.ones(3))]
    [torch.Size([2, 3]), torch.Size([2, 3])]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shapes = [t._data.shape for t in tensors]
    try:
        shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        for i in range(1, len(shapes)):
            try:
                np.broadcast_shapes(*shapes[: i + 1])
            except ValueError:
                raise RuntimeError(broadcast_error([tuple(np.broadcast_shapes(*shapes[:i])), shapes[i]])) from None
        raise
    return tuple(t if t._data.shape == shape else t.expand(shape) for t in tensors)


MESHGRID_WARNING = "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 0-d/1-d tensors; ``indexing='ij'`` (matrix) or ``'xy'`` (Cartesian).

    >>> import retrograd as rg
    >>> [t.shape for t in rg.meshgrid(rg.ones(2), rg.ones(3), indexing="ij")]
    [torch.Size([2, 3]), torch.Size([2, 3])]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("torch.meshgrid: Expected at least one tensor")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    n = len(tensors)
    positions = list(range(n))
    if indexing == "xy" and n >= 2:
        positions[0], positions[1] = 1, 0
    sizes = [0] * n
    for t, p in zip(tensors, positions, strict=True):
        sizes[p] = t.numel()
    out = []
    for t, p in zip(tensors, positions, strict=True):
        view_shape = [1] * n
        view_shape[p] = -1
        out.append(t.reshape(view_shape).expand(sizes))
    return tuple(out)


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix from 0-d, 1-d (rows) and 2-d tensors.

    >>> import retrograd as rg
    >>> rg.block_diag(rg.ones(1, 1), rg.ones(2)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]
    """
    if not tensors:
        return Tensor._make(np.zeros((1, 0), get_default_dtype().np))
    return apply(_shape.block_diag, tensors)  # type: ignore[no-any-return]


def repeat_interleave(input: Any, repeats: Any = None, dim: int | None = None, *,  # noqa: A002
                      output_size: int | None = None) -> Tensor:
    """Repeat each element ``repeats`` times along ``dim``; ``repeat_interleave(counts)`` repeats indices.

    >>> import retrograd as rg
    >>> rg.repeat_interleave(rg.tensor([1, 2]), 2).tolist()
    [1, 1, 2, 2]
    """
    if repeats is None:
        counts = _t(input)
        return Tensor._make(np.repeat(np.arange(counts._data.size, dtype=np.int64), counts._data.reshape(-1)))
    return _t(input).repeat_interleave(repeats, dim, output_size=output_size)


def matmul(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Matrix product with broadcasting (``input @ other``).

    >>> import retrograd as rg
    >>> rg.matmul(rg.eye(2), rg.ones(2)).tolist()
    [1.0, 1.0]
    """
    from .ops import linalg as _linalg

    return _linalg.matmul(_t(input), _t(other))


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along an existing dim.

    >>> import retrograd as rg
    >>> rg.cat([rg.ones(2), rg.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    _check_tensor_list(tensors, "cat")
    return apply(_shape.cat, (*tensors, dim))  # type: ignore[no-any-return]


concat = cat
concatenate = cat


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Stack along a new dim.

    >>> import retrograd as rg
    >>> rg.stack([rg.ones(2), rg.zeros(2)]).shape
    torch.Size([2, 2])
    """
    _check_tensor_list(tensors, "stack")
    return apply(_shape.stack, (*tensors, dim))  # type: ignore[no-any-return]


def _check_tensor_list(tensors: Sequence[Any], name: str) -> None:
    """PyTorch's errors for an empty list or a non-tensor element (not an AssertionError)."""
    if not len(tensors):
        if name == "cat":
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")


def _atleast(n: int, tensors: tuple[Any, ...]) -> Any:
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return _shape.atleast(tensors[0], n)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    _check_tensor_list(tensors, f"atleast_{n}d")
    return tuple(_shape.atleast(t, n) for t in tensors)


def atleast_1d(*tensors: Any) -> Any:
    """The tensor (or each of several) with at least one dim; tensors that have it come back as they are.

    >>> import retrograd as rg
    >>> rg.atleast_1d(rg.tensor(1.0)).shape
    torch.Size([1])
    """
    return _atleast(1, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """The tensor (or each of several) with at least two dims (a vector becomes a row).

    >>> import retrograd as rg
    >>> rg.atleast_2d(rg.ones(3)).shape
    torch.Size([1, 3])
    """
    return _atleast(2, tensors)


def atleast_3d(*tensors: Any) -> Any:
    """The tensor (or each of several) with at least three dims (as NumPy's ``atleast_3d``).

    >>> import retrograd as rg
    >>> rg.atleast_3d(rg.ones(2, 3)).shape
    torch.Size([2, 3, 1])
    """
    return _atleast(3, tensors)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate column-wise (along dim 1, or dim 0 for vectors).

    >>> import retrograd as rg
    >>> rg.hstack([rg.ones(2), rg.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    _check_tensor_list(tensors, "hstack")
    return _shape.hstack(tensors)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate row-wise (vectors become rows).

    >>> import retrograd as rg
    >>> rg.vstack([rg.ones(2), rg.zeros(2)]).shape
    torch.Size([2, 2])
    """
    _check_tensor_list(tensors, "vstack")
    return _shape.vstack(tensors)


row_stack = vstack


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate depth-wise (along dim 2, after ``atleast_3d``).

    >>> import retrograd as rg
    >>> rg.dstack([rg.ones(2), rg.zeros(2)]).shape
    torch.Size([1, 2, 2])
    """
    _check_tensor_list(tensors, "dstack")
    return _shape.dstack(tensors)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack vectors (and 0-d tensors) as columns, matrices as they are, along dim 1.

    >>> import retrograd as rg
    >>> rg.column_stack([rg.ones(2), rg.zeros(2)]).tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    _check_tensor_list(tensors, "column_stack")
    return _shape.column_stack(tensors)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of vectors, one row per tuple (one vector comes back as it is).

    >>> import retrograd as rg
    >>> rg.cartesian_prod(rg.tensor([1, 2]), rg.tensor([3])).tolist()
    [[1, 3], [2, 3]]
    """
    _check_tensor_list(tensors, "meshgrid")
    return _shape.cartesian_prod(tensors)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """The length-``r`` combinations of a vector's elements, one per row (``itertools.combinations``).

    >>> import retrograd as rg
    >>> rg.combinations(rg.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    return _shape.combinations(input, r, with_replacement)


def adjoint(input: Tensor) -> Tensor:  # noqa: A002
    """``input.adjoint()``: the transpose of the last two dims (conjugated for complex tensors).

    >>> import retrograd as rg
    >>> rg.adjoint(rg.ones(2, 3)).shape
    torch.Size([3, 2])
    """
    return input.adjoint()


def diagflat(input: Tensor, offset: int = 0) -> Tensor:  # noqa: A002
    """``input.diagflat(offset)``: the flattened input on a diagonal of a square matrix.

    >>> import retrograd as rg
    >>> rg.diagflat(rg.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
    return _t(input).diagflat(offset)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``input.unsafe_chunk(chunks, dim)``: ``chunk`` whose pieces are not tracked as views.

    >>> import retrograd as rg
    >>> [p.tolist() for p in rg.unsafe_chunk(rg.arange(3), 2)]
    [[0, 1], [2]]
    """
    return input.unsafe_chunk(chunks, dim)


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of the matrices (deprecated in PyTorch for ``linalg.multi_dot``; warns as it does).

    >>> import warnings, retrograd as rg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.chain_matmul(rg.eye(2), rg.ones(2, 3)).shape
    torch.Size([2, 3])
    """
    from .ops import linalg as _linalg

    return _linalg.chain_matmul(*matrices)


# -- predicates and closeness: is_tensor, equal, allclose, isclose, isnan, isinf, isfinite ----
def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a retrograd Tensor.

    >>> import retrograd as rg
    >>> rg.is_tensor(rg.ones(1)), rg.is_tensor([1])
    (True, False)
    """
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:  # noqa: A002
    """Whether the tensor's dtype is a floating dtype."""
    return input.is_floating_point()


def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """True when both tensors have the same shape and elements.

    >>> import retrograd as rg
    >>> rg.equal(rg.ones(2), rg.ones(2))
    True
    """
    return input._data.shape == other._data.shape and bool(np.array_equal(input._data, other._data))


def positive(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself (``+input``), as ``torch.positive``; bool tensors refuse.

    >>> import retrograd as rg
    >>> t = rg.ones(2)
    >>> rg.positive(t) is t
    True
    """
    return input.positive()


def not_equal(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``input != other`` elementwise (``torch.ne``'s alias).

    >>> import retrograd as rg
    >>> rg.not_equal(rg.tensor([1.0, 2.0]), 1.0).tolist()
    [False, True]
    """
    return input.ne(other)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:  # noqa: A002
    """``|input - other| <= atol + rtol * |other|`` everywhere.

    >>> import retrograd as rg
    >>> rg.allclose(rg.ones(2), rg.ones(2) + 1e-9)
    True
    """
    return bool(np.allclose(input._data, _t(other)._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def lstm(*args: Any) -> Any:
    """PyTorch's functional LSTM: ``(input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)`` or ``(data, batch_sizes, hx, params, ...)`` -> ``(output, h_n,
    c_n)`` (see ``nn.LSTM``; the recurrent layers load with ``retrograd.nn``)."""
    from .nn.modules import rnn

    return rnn.lstm(*args)


def gru(*args: Any) -> Any:
    """PyTorch's functional GRU -> ``(output, h_n)`` (arguments as ``lstm``, one state tensor)."""
    from .nn.modules import rnn

    return rnn.gru(*args)


def rnn_tanh(*args: Any) -> Any:
    """PyTorch's functional Elman RNN with tanh -> ``(output, h_n)``."""
    from .nn.modules import rnn

    return rnn.rnn_tanh(*args)


def rnn_relu(*args: Any) -> Any:
    """PyTorch's functional Elman RNN with ReLU -> ``(output, h_n)``."""
    from .nn.modules import rnn

    return rnn.rnn_relu(*args)


# -- strided views (ops/strided.py, loaded on first call) ----------------------------------------


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:  # noqa: A002
    """A view of ``input``'s storage with the given sizes, strides and (absolute) storage offset.

    >>> import retrograd as rg
    >>> rg.as_strided(rg.arange(6.0), (2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    from .ops import strided

    batched = getattr(type(input), "as_strided_batched", None)
    if batched is not None:  # vmap's batched tensors (func/_vmap.py): PyTorch's batching rule
        return batched(input, size, stride, storage_offset)  # type: ignore[no-any-return]
    return strided.as_strided(input, size, stride, storage_offset)


def as_strided_(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:  # noqa: A002
    """``input.as_strided_(size, stride, storage_offset)``: the tensor itself takes the geometry.

    >>> import retrograd as rg
    >>> rg.as_strided_(rg.arange(6.0), (3,), (2,))
    tensor([0., 2., 4.])
    """
    from .ops import strided

    return strided.as_strided_(input, size, stride, storage_offset)


def as_strided_scatter(input: Tensor, src: Tensor, size: Any, stride: Any,  # noqa: A002
                       storage_offset: Any = None) -> Tensor:
    """A contiguous copy of ``input`` with ``src`` written into its ``as_strided`` view.

    >>> import retrograd as rg
    >>> rg.as_strided_scatter(rg.zeros(3), rg.ones(1), (1,), (1,), 2)
    tensor([0., 0., 1.])
    """
    from .ops import strided

    return strided.as_strided_scatter(input, src, size, stride, storage_offset)


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:  # noqa: A002
    """``input.resize_as_(the_template)``.

    >>> import retrograd as rg
    >>> rg.resize_as_(rg.arange(3.0), rg.ones(2))
    tensor([0., 1.])
    """
    from .ops import strided

    return strided.resize_as_(input, the_template)


# -- more linear algebra (ops/linalg_extra.py, loaded on first call) -------------------------------


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: Any = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each pair of rows of ``x1`` and ``x2``.

    >>> import retrograd as rg
    >>> rg.cdist(rg.tensor([[0.0, 0.0]]), rg.tensor([[3.0, 4.0]]))
    tensor([[5.]])
    """
    from .ops import linalg_extra

    return linalg_extra.cdist(x1, x2, p, compute_mode)


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,  # noqa: A002, N803
                     unitriangular: bool = False) -> Any:
    """``(solution, cloned_coefficient)``: the solution of ``op(A) X = input`` for triangular ``A``.

    >>> import retrograd as rg
    >>> rg.triangular_solve(rg.tensor([[2.0]]), rg.tensor([[4.0]])).solution
    tensor([[0.5000]])
    """
    from .ops import linalg_extra

    return linalg_extra.triangular_solve(input, A, upper, transpose, unitriangular)


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """The solution of ``A X = input`` from the Cholesky factor ``input2`` of ``A``.

    >>> import retrograd as rg
    >>> rg.cholesky_solve(rg.tensor([[4.0]]), rg.tensor([[2.0]]))
    tensor([[1.]])
    """
    from .ops import linalg_extra

    return linalg_extra.cholesky_solve(input, input2, upper)


def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """The inverse of ``A`` from its Cholesky factor.

    >>> import retrograd as rg
    >>> rg.cholesky_inverse(rg.tensor([[2.0]]))
    tensor([[0.2500]])
    """
    from .ops import linalg_extra

    return linalg_extra.cholesky_inverse(input, upper)


def qr(input: Tensor, some: bool = True) -> Any:  # noqa: A002
    """Deprecated: ``linalg.qr(input, 'reduced' if some else 'complete')`` (warns once, as PyTorch).

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.qr(rg.eye(2), some=False).Q.shape
    torch.Size([2, 2])
    """
    from .ops import linalg_extra

    return linalg_extra.qr(input, some)


def matrix_rank(input: Tensor, tol: Any = None, symmetric: bool = False, *, out: Any = None) -> Tensor:  # noqa: A002
    """Removed in PyTorch 1.9: raises PyTorch's RuntimeError (use ``linalg.matrix_rank``).

    >>> import retrograd as rg
    >>> callable(rg.matrix_rank)
    True
    """
    from .ops import linalg_extra

    return linalg_extra.matrix_rank(input, tol, symmetric)


def frobenius_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Deprecated: the 2-norm over ``dim`` (one or two dims).

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.frobenius_norm(rg.tensor([3.0, 4.0]), 0)
    tensor(5.)
    """
    from .ops import linalg_extra

    if dim is None:
        return linalg_extra.frobenius_norm(input)
    return linalg_extra.frobenius_norm(input, dim, keepdim)


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Deprecated: the sum of the singular values over two dims.

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.nuclear_norm(rg.eye(2))
    tensor(2.)
    """
    from .ops import linalg_extra

    return linalg_extra.nuclear_norm(input, dim, keepdim)


def lu(*args: Any, **kwargs: Any) -> Any:
    """Deprecated: ``(LU, pivots)`` (``+ infos`` with ``get_infos=True``) of ``A = P L U``.

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.lu(rg.eye(2))[1]
    tensor([1, 2], dtype=torch.int32)
    """
    from .ops import linalg_extra

    return linalg_extra.lu(*args, **kwargs)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True) -> Any:  # noqa: N803
    """``(P, L, U)`` from ``lu``'s packed factors.

    >>> import retrograd as rg
    >>> rg.lu_unpack(rg.eye(2), rg.tensor([1, 2], dtype=rg.int32)).P
    tensor([[1., 0.],
            [0., 1.]])
    """
    from .ops import linalg_extra

    return linalg_extra.lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: A002, N803
    """Deprecated: the solution of ``A X = input`` from ``lu(A)``.

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.lu_solve(rg.ones(2, 1), rg.eye(2), rg.tensor([1, 2], dtype=rg.int32))
    tensor([[1.],
            [1.]])
    """
    from .ops import linalg_extra

    return linalg_extra.lu_solve(input, LU_data, LU_pivots)


__all__ = sorted(
    name for name, value in list(globals().items())
    if not name.startswith("_") and callable(value) and getattr(value, "__module__", None) == __name__
)
