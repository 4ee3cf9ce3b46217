"""Shape and indexing ops reject bad input with PyTorch's exception type and message.

Each case runs on retrograd; with PyTorch installed the same case also runs on torch, so the expected
message is checked to be PyTorch's own.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg


def _m(lib: Any, *shape: int) -> Any:
    return lib.zeros(*shape, dtype=lib.float64)


def _i(lib: Any, *values: Any) -> Any:
    return lib.tensor(list(values), dtype=lib.int64)


DIM_2_OUT = "Dimension out of range (expected to be in range of [-2, 1], but got {})"

CASES: list[tuple[str, Callable[[Any], Any], type, str]] = [
    # out-of-range dims
    ("flip dim", lambda lib: _m(lib, 2, 3).flip(2), IndexError, DIM_2_OUT.format(2)),
    ("roll dim", lambda lib: _m(lib, 2, 3).roll(1, 5), IndexError, DIM_2_OUT.format(5)),
    ("repeat_interleave dim", lambda lib: _m(lib, 2, 3).repeat_interleave(2, dim=3), IndexError, DIM_2_OUT.format(3)),
    ("movedim dim", lambda lib: _m(lib, 2, 3).movedim(0, 5), IndexError, DIM_2_OUT.format(5)),
    ("unflatten dim", lambda lib: _m(lib, 2, 6).unflatten(3, (3, 2)), IndexError, DIM_2_OUT.format(3)),
    ("split dim", lambda lib: _m(lib, 2, 6).split(2, 2), IndexError, DIM_2_OUT.format(2)),
    ("chunk dim", lambda lib: _m(lib, 2, 6).chunk(2, -3), IndexError, DIM_2_OUT.format(-3)),
    ("tensor_split dim", lambda lib: _m(lib, 2, 3).tensor_split((1,), dim=5), IndexError, DIM_2_OUT.format(5)),
    ("index_select dim", lambda lib: _m(lib, 2, 3).index_select(2, _i(lib, 0)), IndexError, DIM_2_OUT.format(2)),
    ("gather dim", lambda lib: _m(lib, 2, 6).gather(2, _i(lib, [1])), IndexError, DIM_2_OUT.format(2)),
    ("scatter dim", lambda lib: _m(lib, 2, 6).scatter(-3, _i(lib, [1]), _m(lib, 1, 1)), IndexError,
     DIM_2_OUT.format(-3)),
    ("take_along_dim dim", lambda lib: _m(lib, 2, 6).take_along_dim(_i(lib, [1]), 2), IndexError,
     DIM_2_OUT.format(2)),
    ("squeeze dims", lambda lib: _m(lib, 2, 3).squeeze((0, 5)), IndexError, DIM_2_OUT.format(5)),
    ("select dim", lambda lib: _m(lib, 2, 3).select(2, 0), IndexError, DIM_2_OUT.format(2)),
    ("unbind dim", lambda lib: _m(lib, 2, 3).unbind(2), IndexError, DIM_2_OUT.format(2)),
    ("swapaxes dim", lambda lib: _m(lib, 2, 3).swapaxes(0, 3), IndexError, DIM_2_OUT.format(3)),
    ("diagonal dim", lambda lib: _m(lib, 3, 3).diagonal(0, 0, 2), IndexError, DIM_2_OUT.format(2)),
    # repeated dims, bad arguments
    ("flip repeated", lambda lib: _m(lib, 2, 3).flip(0, 0), RuntimeError,
     "dim 0 appears multiple times in the list of dims"),
    ("roll misaligned", lambda lib: _m(lib, 2, 3).roll((1, 2), (0,)), RuntimeError,
     "shifts and dimensions must align. shifts: 2, dims:1"),
    ("roll no dims, two shifts", lambda lib: _m(lib, 2, 3).roll((1, 2)), RuntimeError,
     "shifts and dimensions must align. shifts: 2, dims:0"),
    ("roll empty", lambda lib: _m(lib, 2, 3).roll((), ()), RuntimeError, "`shifts` required"),
    ("repeat too few", lambda lib: _m(lib, 2, 3).repeat(2), RuntimeError,
     "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"),
    ("repeat negative", lambda lib: _m(lib, 2, 3).repeat(-1, 2), RuntimeError,
     "Trying to create tensor with negative dimension -2: [-2, 6]"),
    ("tile negative", lambda lib: _m(lib, 2, 3).tile(-1), RuntimeError,
     "Trying to create tensor with negative dimension -3: [2, -3]"),
    ("repeat_interleave negative", lambda lib: _m(lib, 2, 3).repeat_interleave(-1), RuntimeError,
     "Repeats must be non-negative"),
    ("repeat_interleave sizes", lambda lib: _m(lib, 2, 3).repeat_interleave(_i(lib, 1, 2, 3), dim=0), RuntimeError,
     "repeats must have the same size as input along dim, but got repeats.size(0) = 3 and input.size(0) = 2"),
    ("repeat_interleave negative tensor", lambda lib: _m(lib, 2, 3).repeat_interleave(_i(lib, 1, -2), dim=0),
     RuntimeError, "repeats can not be negative"),
    ("movedim lengths", lambda lib: _m(lib, 2, 3).movedim((0, 1), (0,)), RuntimeError,
     "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same number of dims as "
     "destination ([0] dims)"),
    ("movedim repeated", lambda lib: _m(lib, 2, 3).movedim((0, 0), (0, 1)), RuntimeError,
     "movedim: repeated dim in `source` ([0, 0])"),
    ("unflatten sizes", lambda lib: _m(lib, 2, 6).unflatten(1, (4, 2)), RuntimeError,
     "unflatten: Provided sizes [4, 2] don't multiply up to the size of dim 1 (6) in the input tensor"),
    ("unflatten empty sizes", lambda lib: _m(lib, 2, 6).unflatten(1, ()), RuntimeError,
     "unflatten: sizes must be non-empty"),
    ("split size 0", lambda lib: _m(lib, 2, 6).split(0, 1), RuntimeError,
     "split_size can only be 0 if dimension size is 0, but got dimension size of 6"),
    ("split negative", lambda lib: _m(lib, 2, 6).split(-1, 1), RuntimeError,
     "split expects split_size be non-negative, but got split_size=-1"),
    ("split sizes sum", lambda lib: _m(lib, 2, 6).split([2, 3], 1), RuntimeError,
     "split_with_sizes expects split_sizes to sum exactly to 6 (input tensor's size at dimension 1), but got "
     "split_sizes=[2, 3]"),
    ("split sizes negative", lambda lib: _m(lib, 2, 6).split([-1, 7], 1), RuntimeError,
     "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[-1, 7]"),
    ("chunk zero", lambda lib: _m(lib, 2, 6).chunk(0, 1), RuntimeError,
     "chunk expects `chunks` to be greater than 0, got: 0"),
    ("tensor_split zero", lambda lib: _m(lib, 2, 6).tensor_split(0, 1), RuntimeError,
     "number of sections must be larger than 0, got 0"),
    ("tensor_split 2-d indices", lambda lib: _m(lib, 2, 6).tensor_split(_i(lib, [1]), 1), RuntimeError,
     "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but got "
     "a tensor with 2 dims"),
    ("tensor_split float indices", lambda lib: _m(lib, 2, 3).tensor_split(lib.tensor([1.0]), 1), RuntimeError,
     "tensor_split expected tensor_indices_or_sections to have dtype of long, but got Float"),
    ("hsplit divisible", lambda lib: lib.hsplit(_m(lib, 2, 6), 4), RuntimeError,
     "torch.hsplit attempted to split along dimension 1, but the size of the dimension 6 is not divisible by the "
     "split_size 4!"),
    ("vsplit 1-d", lambda lib: lib.vsplit(_m(lib, 6), 2), RuntimeError,
     "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!"),
    ("dsplit 2-d", lambda lib: lib.dsplit(_m(lib, 2, 6), 2), RuntimeError,
     "torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 dimensions!"),
    # index out of bounds and bad index tensors
    ("index_select bounds", lambda lib: _m(lib, 2, 6).index_select(1, _i(lib, 6)), RuntimeError,
     "INDICES element is out of DATA bounds, id=6 axis_dim=6"),
    ("index_select negative", lambda lib: _m(lib, 2, 6).index_select(1, _i(lib, -1)), RuntimeError,
     "INDICES element is out of DATA bounds, id=-1 axis_dim=6"),
    ("index_select 2-d index", lambda lib: _m(lib, 2, 6).index_select(1, _i(lib, [1])), IndexError,
     "index_select(): Index is supposed to be a vector"),
    ("index_select float index", lambda lib: _m(lib, 2, 6).index_select(1, lib.tensor([1.0])), RuntimeError,
     "index_select(): Expected dtype int32 or int64 for index"),
    ("index_add bounds", lambda lib: _m(lib, 2, 6).index_add(1, _i(lib, 6), _m(lib, 2, 1)), RuntimeError,
     "index 6 is out of bounds for dimension 1 with size 6"),
    ("index_add count", lambda lib: _m(lib, 2, 6).index_add(1, _i(lib, 1, 2), _m(lib, 2, 1)), RuntimeError,
     "index_add_(): Number of indices (2) should be equal to source.size(dim): (1), for dim: 1"),
    ("index_add shape", lambda lib: _m(lib, 2, 6).index_add(1, _i(lib, 1), _m(lib, 3, 1)), RuntimeError,
     "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = [2, 6] "
     "source.shape = [3, 1]"),
    ("index_add dtype", lambda lib: _m(lib, 2, 6).index_add(1, _i(lib, 1), lib.zeros(2, 1)), RuntimeError,
     "index_add_(): self (Double) and source (Float) must have the same scalar type"),
    ("gather bounds", lambda lib: _m(lib, 2, 6).gather(1, _i(lib, [7])), RuntimeError,
     "index 7 is out of bounds for dimension 1 with size 6"),
    ("gather negative", lambda lib: _m(lib, 2, 6).gather(1, _i(lib, [-1])), RuntimeError,
     "index -1 is out of bounds for dimension 1 with size 6"),
    ("gather rank", lambda lib: _m(lib, 2, 6).gather(1, _i(lib, 7)), RuntimeError,
     "Index tensor must have the same number of dimensions as input tensor"),
    ("gather float index", lambda lib: _m(lib, 2, 6).gather(1, lib.tensor([[1.0]])), RuntimeError,
     "gather(): Expected dtype int32/int64 for index"),
    ("gather index too large", lambda lib: _m(lib, 2, 6).gather(1, _i(lib, [1], [1], [1])), RuntimeError,
     "Size does not match at dimension 0 expected index [3, 1] to be no larger than self [2, 6] apart from "
     "dimension 1"),
    ("scatter bounds", lambda lib: _m(lib, 2, 6).scatter(1, _i(lib, [7]), _m(lib, 1, 1)), RuntimeError,
     "index 7 is out of bounds for dimension 1 with size 6"),
    ("scatter_add bounds", lambda lib: _m(lib, 2, 6).scatter_add(1, _i(lib, [7]), _m(lib, 1, 1)), RuntimeError,
     "index 7 is out of bounds for dimension 1 with size 6"),
    ("scatter src too small", lambda lib: _m(lib, 2, 6).scatter(1, _i(lib, [1, 1]), _m(lib, 1, 1)), RuntimeError,
     "Expected index [1, 2] to be no larger than self [2, 6] apart from dimension 1 and to be no larger size than "
     "src [1, 1]"),
    ("scatter dtype", lambda lib: _m(lib, 2, 6).scatter(1, _i(lib, [1]), lib.zeros(1, 1)), RuntimeError,
     "scatter(): Expected self.dtype to be equal to src.dtype"),
    ("scatter float index", lambda lib: _m(lib, 2, 6).scatter(1, lib.tensor([[0.0]]), 2.0), RuntimeError,
     "scatter(): Expected dtype int32/int64 for index"),
    ("scatter reduce name", lambda lib: _m(lib, 2, 6).scatter(1, _i(lib, [1]), 1.0, reduce="foo"), RuntimeError,
     "reduce argument must be either add or multiply."),
    ("take bounds", lambda lib: _m(lib, 2, 6).take(_i(lib, 12)), IndexError,
     "out of range: tried to access index 12 on a tensor of 12 elements."),
    ("take negative bounds", lambda lib: _m(lib, 2, 6).take(_i(lib, -13)), IndexError,
     "out of range: tried to access index -13 on a tensor of 12 elements."),
    ("take float index", lambda lib: _m(lib, 2, 6).take(lib.tensor([1.0])), RuntimeError,
     "take(): Expected a long tensor for index, but got Float"),
    ("take_along_dim rank", lambda lib: _m(lib, 2, 6).take_along_dim(_i(lib, 1), 1), RuntimeError,
     "torch.take_along_dim(): input and indices should have the same number of dimensions, but got 2 dimensions "
     "for input, and 1 dimensions for indices"),
    ("masked_select shape", lambda lib: _m(lib, 2, 6).masked_select(lib.tensor([True, False])), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (6) at non-singleton dimension 1"),
    ("masked_select mask dtype", lambda lib: _m(lib, 2, 6).masked_select(_i(lib, 1, 0)), RuntimeError,
     "masked_select: expected BoolTensor for mask"),
    # broadcasting and grids
    ("broadcast_to size", lambda lib: _m(lib, 2, 6).broadcast_to((3, 6)), RuntimeError,
     "The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0.  Target "
     "sizes: [3, 6].  Tensor sizes: [2, 6]"),
    ("broadcast_to fewer dims", lambda lib: _m(lib, 2, 6).broadcast_to((6,)), RuntimeError,
     "expand(torch.DoubleTensor{[2, 6]}, size=[6]): the number of sizes provided (1) must be greater or equal to "
     "the number of dimensions in the tensor (2)"),
    ("broadcast_to leading -1", lambda lib: _m(lib, 3).broadcast_to((-1, 3)), RuntimeError,
     "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"),
    ("broadcast_tensors", lambda lib: lib.broadcast_tensors(_m(lib, 2), _m(lib, 3)), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("broadcast_tensors third", lambda lib: lib.broadcast_tensors(_m(lib, 2, 1), _m(lib, 3), _m(lib, 4, 1, 2)),
     RuntimeError, "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 2"),
    ("broadcast_shapes", lambda lib: lib.broadcast_shapes((2,), (3,)), RuntimeError,
     "Attempting to broadcast a dimension of length 3 at -1! Mismatching argument at index 1 had (3,); but expected "
     "shape should be broadcastable to [2]"),
    ("meshgrid 2-d", lambda lib: lib.meshgrid(_m(lib, 2, 2), _m(lib, 3), indexing="ij"), RuntimeError,
     "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "),
    ("meshgrid indexing", lambda lib: lib.meshgrid(_m(lib, 2), _m(lib, 3), indexing="foo"), RuntimeError,
     'torch.meshgrid: indexing must be one of "xy" or "ij", but received: foo'),
    ("meshgrid dtypes", lambda lib: lib.meshgrid(_m(lib, 2), lib.zeros(3), indexing="ij"), RuntimeError,
     "meshgrid expects all tensors to have the same dtype"),
    ("expand_as", lambda lib: _m(lib, 2, 3).expand_as(_m(lib, 3, 2)), RuntimeError,
     "The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 1.  Target "
     "sizes: [3, 2].  Tensor sizes: [2, 3]"),
    ("view_as", lambda lib: _m(lib, 2, 3).view_as(_m(lib, 4)), RuntimeError,
     "shape '[4]' is invalid for input of size 6"),
    ("reshape_as", lambda lib: _m(lib, 2, 3).reshape_as(_m(lib, 4)), RuntimeError,
     "shape '[4]' is invalid for input of size 6"),
    ("flatten order", lambda lib: _m(lib, 2, 3, 4).flatten(2, 1), RuntimeError,
     "flatten() has invalid args: start_dim cannot come after end_dim"),
    ("narrow length", lambda lib: _m(lib, 2, 3).narrow(0, 1, 5), RuntimeError,
     "start (1) + length (5) exceeds dimension size (2)."),
    ("block_diag 3-d", lambda lib: lib.block_diag(_m(lib, 2, 2, 2)), RuntimeError,
     "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions"),
    # diagonals and triangles
    ("diagonal same dims", lambda lib: _m(lib, 3, 3).diagonal(0, 0, 0), RuntimeError,
     "diagonal dimensions cannot be identical 0, 0"),
    ("diag_embed same dims", lambda lib: lib.diag_embed(_m(lib, 3), 0, 0, 0), RuntimeError,
     "diagonal dimensions cannot be identical 0, 0"),
    ("diag 3-d", lambda lib: lib.diag(_m(lib, 2, 2, 2)), RuntimeError, "diag(): Supports 1D or 2D tensors. Got 3D"),
    ("tril 1-d", lambda lib: lib.tril(_m(lib, 3)), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    ("triu 1-d", lambda lib: _m(lib, 3).triu(), RuntimeError, "triu: input tensor must have at least 2 dimensions"),
]

IDS = [c[0] for c in CASES]


@pytest.mark.parametrize(("name", "fn", "exc", "message"), CASES, ids=IDS)
def test_error(name: str, fn: Callable[[Any], Any], exc: type, message: str) -> None:
    with pytest.raises(exc, match=re.escape(message)):
        fn(rg)


@pytest.mark.parametrize(("name", "fn", "exc", "message"), CASES, ids=IDS)
def test_error_is_pytorchs(torch: Any, name: str, fn: Callable[[Any], Any], exc: type, message: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=re.escape(message)):
            fn(torch)


def test_scatter_reduce_forward_and_backward_error(torch: Any) -> None:
    """``scatter(..., reduce=)`` computes like PyTorch and, like PyTorch, has no derivative."""
    values = np.arange(6.0).reshape(2, 3)
    index = [[0, 1], [2, 2]]
    for reduce in ("add", "multiply"):
        outs = []
        for lib in (rg, torch):
            x = lib.tensor(values, requires_grad=True)
            src = lib.tensor([[1.5, 2.0], [3.0, -1.0]], dtype=lib.float64)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = (x * 1).scatter(1, lib.tensor(index), src, reduce=reduce)
                out_value = (x * 1).scatter(1, lib.tensor(index), 2.0, reduce=reduce)
            assert type(out.grad_fn).__name__ == "NotImplemented"
            with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
                out.sum().backward()
            with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
                out_value.sum().backward()
            outs.append((out.detach().numpy(), out_value.detach().numpy()))
        np.testing.assert_allclose(outs[0][0], outs[1][0])
        np.testing.assert_allclose(outs[0][1], outs[1][1])


def test_scatter_reduce_with_tensor_src_warns() -> None:
    x = rg.zeros(2, 3)
    with pytest.warns(UserWarning, match="The reduce argument of torch.scatter with Tensor src is deprecated"):
        x.scatter(1, rg.tensor([[0]]), rg.ones(1, 1), reduce="add")


def test_meshgrid_without_indexing_warns_and_uses_ij() -> None:
    with pytest.warns(UserWarning, match="torch.meshgrid: in an upcoming release, it will be required to pass the "
                                         "indexing argument."):
        a, b = rg.meshgrid(rg.arange(2), rg.arange(3))
    assert a.shape == (2, 3) and a.tolist() == [[0, 0, 0], [1, 1, 1]]
    assert b.tolist() == [[0, 1, 2], [0, 1, 2]]


def test_broadcast_tensors_returns_inputs_already_in_shape() -> None:
    a, b = rg.ones(2, 3, requires_grad=True), rg.ones(3, requires_grad=True)
    out = rg.broadcast_tensors(a, b)
    assert out[0] is a
    assert type(out[1].grad_fn).__name__ == "ExpandBackward0"


def test_broadcast_shapes_value() -> None:
    assert rg.broadcast_shapes((2, 1), (3,), 1, (4, 1, 1)) == rg.Size([4, 2, 3])
    assert repr(rg.broadcast_shapes((2, 1))) == "torch.Size([2, 1])"


def test_split_outputs_are_views_sharing_memory() -> None:
    x = rg.arange(6.0).reshape(2, 3)
    first, second = x.split([1, 2], dim=1)
    x.add_(1)
    assert first.tolist() == [[1.0], [4.0]]
    assert second.tolist() == [[2.0, 3.0], [5.0, 6.0]]


def test_diagonal_is_a_writable_view() -> None:
    x = rg.zeros(3, 3)
    x.diagonal().fill_(2.0)
    assert x.tolist() == [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]


def test_diagonal_view_inplace_gradient(torch: Any) -> None:
    """An in-place write through a diagonal view rewrites the base's history (CopySlices), as in PyTorch."""
    grads = []
    for lib in (rg, torch):
        a = lib.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
        b = a * 1
        b.diagonal().mul_(3.0)
        (b * b).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_nonzero_has_no_grad() -> None:
    x = rg.tensor([[0.0, 1.5], [2.0, 0.0]], requires_grad=True)
    out = x.nonzero()
    assert out.dtype == rg.int64 and not out.requires_grad
    assert out.tolist() == [[0, 1], [1, 0]]


# -- whole graphs of composite ops, node by node ----------------------------------------------------


def _graph(node: Any) -> Any:
    """The grad_fn graph below ``node`` as nested (name, children) tuples."""
    if node is None:
        return None
    return (type(node).__name__, tuple(_graph(n) for n, _ in node.next_functions))


COMPOSITES: list[tuple[str, Callable[..., Any], list[tuple[int, ...]]]] = [
    ("repeat_interleave int", lambda lib, a: a.repeat_interleave(2, dim=0), [(2, 3)]),
    ("repeat_interleave flat", lambda lib, a: a.repeat_interleave(3), [(2, 3)]),
    ("repeat_interleave tensor", lambda lib, a: a.repeat_interleave(lib.tensor([1, 2]), dim=0), [(2, 3)]),
    ("meshgrid xy", lambda lib, a, b: lib.meshgrid(a, b, indexing="xy")[0], [(2,), (3,)]),
    ("take_along_dim", lambda lib, a: a.take_along_dim(lib.tensor([[0], [2]]), 1), [(2, 3)]),
    ("take_along_dim flat", lambda lib, a: lib.take_along_dim(a, lib.tensor([4, 0])), [(2, 3)]),
    ("tensor_split", lambda lib, a: a.tensor_split(2, 1)[1], [(2, 5)]),
    ("chunk empty", lambda lib, a: a.chunk(3)[2], [(0, 2)]),
    ("movedim", lambda lib, a: a.movedim((0, 1), (2, 0)), [(2, 3, 4)]),
    ("unflatten", lambda lib, a: a.unflatten(-1, (2, -1)), [(3, 4)]),
    ("flatten noncontiguous", lambda lib, a: a.mT.flatten(1), [(2, 3, 4)]),
    ("ravel noncontiguous", lambda lib, a: a.t().ravel(), [(2, 3)]),
    ("reshape_as noncontiguous", lambda lib, a: a.t().reshape_as(a.detach().reshape(-1)), [(2, 3)]),
    ("hsplit", lambda lib, a: lib.hsplit(a, [1])[1], [(2, 3)]),
    ("fliplr", lambda lib, a: a.fliplr(), [(2, 3)]),
    ("tile", lambda lib, a: a.tile((2,)), [(2, 3)]),
    ("broadcast_to", lambda lib, a: a.broadcast_to((2, 2, 3)), [(2, 3)]),
    ("block_diag", lambda lib, a, b: lib.block_diag(a, b), [(2,), (1, 2)]),
    ("diag vector", lambda lib, a: lib.diag(a, 1), [(3,)]),
    ("diag matrix", lambda lib, a: lib.diag(a, -1), [(3, 3)]),
]


@pytest.mark.parametrize(("name", "fn", "shapes"), COMPOSITES, ids=[c[0] for c in COMPOSITES])
def test_composite_graph_is_pytorchs(torch: Any, name: str, fn: Callable[..., Any],
                                     shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    graphs, values = [], []
    for lib in (rg, torch):
        out = fn(lib, *[lib.tensor(a, requires_grad=True) for a in arrays])
        graphs.append(_graph(out.grad_fn))
        values.append(out.detach().numpy())
    assert graphs[0] == graphs[1]
    np.testing.assert_array_equal(values[0], values[1])
