"""Op database entries for shape and indexing ops: flip, roll, repeat/tile/repeat_interleave, movedim,
unflatten, split/chunk/tensor_split, gather/scatter, index_select/index_add, masked_select, take,
take_along_dim, nonzero, broadcasting helpers, meshgrid, block_diag, and the view helpers."""

from __future__ import annotations

import numpy as np

from . import OpInfo, Sample, distinct, uniform


def _idx(*values: object) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _with(args: tuple[object, ...], name: str = "", **kwargs: object) -> Sample:
    return Sample(args, kwargs, name=name)


def _noncontig(args: tuple[object, ...], **kwargs: object) -> Sample:
    return Sample(args, kwargs, name="noncontiguous", noncontiguous=True)


def zero_d(sample: Sample, *positions: int) -> Sample:
    """Mark arguments the op's fn gets as 0-d tensors (the harness makes tensors at least 1-d)."""
    sample.kwargs["_0d"] = positions
    return sample


def _accepting_zero_d(fn):  # type: ignore[no-untyped-def]
    def wrapped(lib, *args, _0d=(), **kwargs):  # type: ignore[no-untyped-def]
        return fn(lib, *(a.reshape(()) if i in _0d else a for i, a in enumerate(args)), **kwargs)

    return wrapped


def _flip(rng: np.random.Generator) -> list[Sample]:
    return [
        _with((uniform(rng, 2, 3, 4),), "3-d two dims", dims=(0, -1)),
        _with((uniform(rng, 3),), "vector", dims=(0,)),
        zero_d(_with((uniform(rng),), "0-d", dims=()), 0),
        _with((uniform(rng, 0, 3),), "empty", dims=(1,)),
        _noncontig((uniform(rng, 3, 2),), dims=(1,)),
    ]


def _roll(rng: np.random.Generator) -> list[Sample]:
    return [
        _with((uniform(rng, 2, 3),), "one dim", shifts=1, dims=0),
        _with((uniform(rng, 2, 3, 4),), "two dims", shifts=(1, -2), dims=(0, 2)),
        _with((uniform(rng, 2, 3),), "flattened", shifts=4, dims=None),
        _noncontig((uniform(rng, 3, 2),), shifts=-1, dims=1),
        _with((uniform(rng, 0, 2),), "empty", shifts=1, dims=1),
    ]


def _repeat(rng: np.random.Generator) -> list[Sample]:
    return [
        _with((uniform(rng, 2, 3),), "extra leading dim", sizes=(2, 1, 2)),
        _with((uniform(rng, 3),), "vector", sizes=(2, 2)),
        zero_d(_with((uniform(rng),), "0-d", sizes=(3,)), 0),
        _with((uniform(rng, 2, 3),), "zero repeats", sizes=(1, 0)),
        _noncontig((uniform(rng, 3, 2),), sizes=(2, 2)),
    ]


def _tile(rng: np.random.Generator) -> list[Sample]:
    return [
        _with((uniform(rng, 2, 3),), "fewer reps", reps=(2,)),
        _with((uniform(rng, 2, 3),), "more reps", reps=(2, 1, 2)),
        _noncontig((uniform(rng, 3, 2),), reps=(1, 3)),
    ]


def _repeat_interleave(rng: np.random.Generator) -> list[Sample]:
    return [
        _with((uniform(rng, 2, 3), 2), "int along dim", dim=0),
        _with((uniform(rng, 2, 3), 3), "int flattened", dim=None),
        _with((uniform(rng, 2, 3), _idx(1, 0, 2)), "tensor repeats", dim=1),
        _with((uniform(rng, 2, 3), _idx(2)), "one-element repeats", dim=-1),
        _noncontig((uniform(rng, 3, 2), 2), dim=1),
        zero_d(_with((uniform(rng), 2), "0-d", dim=None), 0),
    ]


def _split(rng: np.random.Generator) -> list[Sample]:
    return [
        _with((uniform(rng, 2, 6), 2), "even", dim=1),
        _with((uniform(rng, 7, 2), 3), "uneven", dim=0),
        _with((uniform(rng, 2, 5), [1, 4]), "sizes", dim=-1),
        _with((uniform(rng, 2, 5), [0, 5, 0]), "sizes with empty", dim=1),
        _noncontig((uniform(rng, 6, 2), 4), dim=1),
    ]


def _chunk(rng: np.random.Generator) -> list[Sample]:
    return [
        _with((uniform(rng, 2, 6), 3), "even", dim=1),
        _with((uniform(rng, 7, 2), 4), "uneven", dim=0),
        _with((uniform(rng, 0, 2), 3), "empty", dim=0),
        _noncontig((uniform(rng, 5, 2), 2), dim=1),
    ]


def _tensor_split(rng: np.random.Generator) -> list[Sample]:
    return [
        _with((uniform(rng, 2, 7), 3), "sections", dim=1),
        _with((uniform(rng, 7, 2), [1, 4, 10]), "indices", dim=0),
        _with((uniform(rng, 2, 7), _idx(2, -2)), "tensor indices", dim=-1),
        zero_d(_with((uniform(rng, 2, 5), np.array(2)), "0-d tensor sections", dim=1), 1),
        _noncontig((uniform(rng, 5, 2), 2), dim=1),
    ]


def _index_select(rng: np.random.Generator) -> list[Sample]:
    return [
        _with((uniform(rng, 3, 4), _idx(0, 2, 2)), "repeated", dim=1),
        _with((uniform(rng, 3, 4), _idx(1)), "single", dim=-2),
        zero_d(_with((uniform(rng, 3, 4), np.array(2)), "0-d index", dim=0), 1),
        zero_d(_with((uniform(rng), _idx(0)), "0-d input", dim=0), 0),
        _with((uniform(rng, 3, 4), np.array([2, 0], dtype=np.int32)), "int32 index", dim=1),
        _with((uniform(rng, 3, 4), _idx()), "empty index", dim=1),
        _noncontig((uniform(rng, 4, 3), _idx(3, 0)), dim=1),
    ]


def _index_add(rng: np.random.Generator) -> list[Sample]:
    return [
        _with((uniform(rng, 3, 4), _idx(0, 2, 2), uniform(rng, 3, 3)), "repeated", dim=1, alpha=1),
        _with((uniform(rng, 3, 4), _idx(2, 0), uniform(rng, 2, 4)), "alpha", dim=0, alpha=2.5),
        _noncontig((uniform(rng, 4, 3), _idx(1), uniform(rng, 1, 3)), dim=1, alpha=1),
    ]


OPS: list[OpInfo] = [
    OpInfo("flip", lambda lib, a, dims: a.flip(dims), _flip, covers=("flip",)),
    OpInfo("flip", lambda lib, a, dims: lib.flip(a, dims=dims), _flip, covers=("flip",), variant_test_name="fn"),
    OpInfo("fliplr", lambda lib, a: lib.fliplr(a), lambda rng: [Sample((uniform(rng, 2, 3),))], covers=("fliplr",)),
    OpInfo("flipud", lambda lib, a: a.flipud(), lambda rng: [Sample((uniform(rng, 2, 3),))], covers=("flipud",)),
    OpInfo("roll", lambda lib, a, shifts, dims: a.roll(shifts, dims), _roll, covers=("roll",)),
    OpInfo("roll", lambda lib, a, shifts, dims: lib.roll(a, shifts, dims), _roll, covers=("roll",), variant_test_name="fn"),
    OpInfo("repeat", lambda lib, a, sizes: a.repeat(*sizes), _repeat),
    OpInfo("tile", lambda lib, a, reps: lib.tile(a, reps), _tile, covers=("tile",)),
    OpInfo("tile", lambda lib, a: a.tile(dims=(2, 1)), lambda rng: [Sample((uniform(rng, 3),))],
           covers=("tile",), variant_test_name="method"),
    OpInfo("repeat_interleave", lambda lib, a, r, dim: a.repeat_interleave(r, dim=dim), _repeat_interleave,
           covers=("repeat_interleave",)),
    OpInfo("repeat_interleave", lambda lib, a, r, dim: lib.repeat_interleave(a, r, dim),
           _repeat_interleave, covers=("repeat_interleave",), variant_test_name="fn"),
    OpInfo("repeat_interleave",
           lambda lib, a: a.repeat_interleave(2, dim=0, output_size=4),
           lambda rng: [Sample((uniform(rng, 2, 3),))], covers=("repeat_interleave",), variant_test_name="output_size"),
    OpInfo("repeat_interleave", lambda lib, c: lib.repeat_interleave(c),
           lambda rng: [Sample((_idx(1, 0, 3),))], gradcheck=False, covers=("repeat_interleave",), variant_test_name="counts"),
    OpInfo("movedim", lambda lib, a: a.movedim(0, 2), lambda rng: [Sample((uniform(rng, 2, 3, 4),))],
           covers=("movedim",)),
    OpInfo("movedim", lambda lib, a: lib.movedim(a, (0, -2), (2, 0)),
           lambda rng: [Sample((uniform(rng, 2, 3, 4),)), Sample((uniform(rng, 3, 2, 4),), name="noncontiguous", noncontiguous=True)],
           covers=("movedim",), variant_test_name="lists"),
    OpInfo("moveaxis", lambda lib, a: lib.moveaxis(a, -1, 0), lambda rng: [Sample((uniform(rng, 2, 3, 4),))],
           covers=("moveaxis",)),
    OpInfo("swapdims", lambda lib, a: lib.swapdims(a, 0, -1),
           lambda rng: [Sample((uniform(rng, 2, 3, 4),)), Sample((uniform(rng, 3, 2),), name="noncontiguous", noncontiguous=True)],
           covers=("swapdims", "swapaxes")),
    OpInfo("unflatten", lambda lib, a, dim, sizes: a.unflatten(dim, sizes),
           lambda rng: [_with((uniform(rng, 2, 6), 1, (3, 2)), "inner"),
                        _with((uniform(rng, 6, 2), 0, (-1, 2)), "inferred"),
                        _with((uniform(rng, 6),), "vector", dim=-1, sizes=(2, 1, 3)),
                        _noncontig((uniform(rng, 6, 2), 1, (3, 2)))],
           covers=("unflatten",)),
    OpInfo("unflatten", lambda lib, a: lib.unflatten(a, 1, (2, 2)), lambda rng: [Sample((uniform(rng, 3, 4),))],
           covers=("unflatten",), variant_test_name="fn"),
    OpInfo("narrow", lambda lib, a: a.narrow(-1, -3, 2), lambda rng: [Sample((uniform(rng, 2, 5),))],
           covers=("narrow",), variant_test_name="negative_start"),
    OpInfo("select", lambda lib, a: lib.select(a, -2, -1), lambda rng: [Sample((uniform(rng, 2, 3, 4),))],
           covers=("select",), variant_test_name="negative"),
    OpInfo("split", lambda lib, a, size, dim: a.split(size, dim), _split, covers=("split",)),
    OpInfo("split", lambda lib, a, size, dim: lib.split(a, split_size_or_sections=size, dim=dim), _split,
           covers=("split",), variant_test_name="fn"),
    OpInfo("split_with_sizes", lambda lib, a: a.split_with_sizes([2, 1], 0),
           lambda rng: [Sample((uniform(rng, 3, 2),))], covers=("split_with_sizes",)),
    OpInfo("chunk", lambda lib, a, chunks, dim: a.chunk(chunks, dim), _chunk, covers=("chunk",)),
    OpInfo("chunk", lambda lib, a, chunks, dim: lib.chunk(a, chunks, dim), _chunk, covers=("chunk",), variant_test_name="fn"),
    OpInfo("tensor_split", lambda lib, a, spec, dim: a.tensor_split(spec, dim), _tensor_split,
           covers=("tensor_split",)),
    OpInfo("tensor_split", lambda lib, a, spec, dim: lib.tensor_split(a, spec, dim=dim), _tensor_split,
           covers=("tensor_split",), variant_test_name="fn"),
    OpInfo("hsplit", lambda lib, a, spec: lib.hsplit(a, spec),
           lambda rng: [Sample((uniform(rng, 2, 6), 3)), Sample((uniform(rng, 6), [1, 4]), name="vector")],
           covers=("hsplit",)),
    OpInfo("vsplit", lambda lib, a: a.vsplit(2), lambda rng: [Sample((uniform(rng, 4, 3),))], covers=("vsplit",)),
    OpInfo("dsplit", lambda lib, a: lib.dsplit(a, [1]), lambda rng: [Sample((uniform(rng, 2, 1, 3),))],
           covers=("dsplit",)),
    OpInfo("unbind", lambda lib, a: lib.unbind(a, -1), lambda rng: [Sample((uniform(rng, 2, 3),))],
           covers=("unbind",), variant_test_name="negative"),
    # -- gather / scatter --
    OpInfo("gather", lambda lib, a, i, dim: lib.gather(a, dim, i),
           lambda rng: [_with((uniform(rng, 3, 4), _idx(0, 3, 3)[None].repeat(2, 0)), "smaller index", dim=-1),
                        _with((uniform(rng, 3, 4), np.array([[2, 0]], dtype=np.int32)), "int32 index", dim=0),
                        zero_d(_with((uniform(rng), np.array(0)), "0-d", dim=0), 0, 1),
                        _noncontig((uniform(rng, 4, 3), _idx(0, 1, 0)[:, None]), dim=1)],
           covers=("gather",), variant_test_name="more"),
    OpInfo("scatter", lambda lib, a, s, i, dim: a.scatter(dim, i, s),
           lambda rng: [_with((uniform(rng, 3, 4), uniform(rng, 2, 3), _idx(1, 0, 2)[None].repeat(2, 0)),
                              "src larger than index", dim=1),
                        _with((uniform(rng, 3, 4), uniform(rng, 1, 4), _idx(2, 0, 1, 1)[None]), "negative dim",
                              dim=-2)],
           covers=("scatter",), variant_test_name="more"),
    OpInfo("scatter", lambda lib, a, i: a.scatter(1, i, 1.5),
           lambda rng: [Sample((uniform(rng, 3, 4), _idx(1, 0, 3)[:, None]))], covers=("scatter",), variant_test_name="value"),
    OpInfo("scatter", lambda lib, a, i: lib.scatter(a, 0, i, value=2),
           lambda rng: [Sample((uniform(rng, 3, 4), _idx(2, 0)[None]))], covers=("scatter",), variant_test_name="value_kwarg"),
    OpInfo("scatter", lambda lib, a, s, i: a.clone().scatter_(1, i, s),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 3, 2), _idx(1, 0, 3, 2, 2, 1).reshape(3, 2)))],
           covers=("scatter_",), variant_test_name="inplace"),
    OpInfo("scatter_add", lambda lib, a, s, i: a.clone().scatter_add_(0, i, s),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 2, 4), _idx(1, 1, 0, 2, 2, 2, 0, 1).reshape(2, 4)))],
           covers=("scatter_add_",), variant_test_name="inplace"),
    # -- index_select / index_add --
    OpInfo("index_select", lambda lib, a, i, dim: a.index_select(dim, i), _index_select, covers=("index_select",)),
    OpInfo("index_select", lambda lib, a, i, dim: lib.index_select(a, dim, i), _index_select,
           covers=("index_select",), variant_test_name="fn"),
    OpInfo("index_add", lambda lib, a, i, s, dim, alpha: a.index_add(dim, i, s, alpha=alpha), _index_add,
           covers=("index_add",)),
    OpInfo("index_add", lambda lib, a, i, s, dim, alpha: lib.index_add(a, dim, i, s, alpha=alpha), _index_add,
           covers=("index_add",), variant_test_name="fn"),
    OpInfo("index_add", lambda lib, a, i, s: a.clone().index_add_(0, i, s),
           lambda rng: [Sample((uniform(rng, 3, 2), _idx(2, 2), uniform(rng, 2, 2)))], covers=("index_add_",), variant_test_name="inplace"),
    # -- masks, take --
    OpInfo("masked_select", lambda lib, a, m: a.masked_select(m),
           lambda rng: [Sample((uniform(rng, 3, 4), rng.random((3, 4)) > 0.5), name="same shape"),
                        Sample((uniform(rng, 3, 1), rng.random((3, 4)) > 0.5), name="broadcast input"),
                        Sample((uniform(rng, 3, 4), rng.random(4) > 0.5), name="broadcast mask"),
                        zero_d(Sample((uniform(rng), np.array(True)), name="0-d"), 0, 1),
                        Sample((uniform(rng, 0, 4), np.zeros(4, bool)), name="empty"),
                        Sample((uniform(rng, 4, 3), rng.random((4, 3)) > 0.5), name="noncontiguous", noncontiguous=True)],
           covers=("masked_select",)),
    OpInfo("masked_select", lambda lib, a, m: lib.masked_select(a, m),
           lambda rng: [Sample((uniform(rng, 2, 3), rng.random((2, 3)) > 0.3))], covers=("masked_select",), variant_test_name="fn"),
    OpInfo("masked_fill", lambda lib, a, m: a.masked_fill(m, -1.0),
           lambda rng: [Sample((uniform(rng, 3, 4), rng.random(4) > 0.5), name="broadcast mask")],
           covers=("masked_fill",), check_node=False, variant_test_name="broadcast"),
    OpInfo("take", lambda lib, a, i: a.take(i),
           lambda rng: [Sample((uniform(rng, 3, 4), _idx(0, 11, -1, 5, 5).reshape(5, 1)), name="2-d index"),
                        zero_d(Sample((uniform(rng, 3, 4), np.array(7)), name="0-d index"), 1),
                        zero_d(Sample((uniform(rng), _idx(0, -1)), name="0-d input"), 0),
                        Sample((uniform(rng, 3, 4), _idx()), name="empty index"),
                        Sample((uniform(rng, 4, 3), _idx(1, 2, 3)), name="noncontiguous", noncontiguous=True)],
           covers=("take",)),
    OpInfo("take", lambda lib, a, i: lib.take(a, i), lambda rng: [Sample((uniform(rng, 2, 3), _idx(5, 0, 5)))],
           covers=("take",), variant_test_name="fn"),
    OpInfo("take_along_dim", lambda lib, a, i, dim: a.take_along_dim(i, dim),
           lambda rng: [_with((uniform(rng, 3, 4), _idx(0, 3, 1).reshape(3, 1)), "same rank", dim=1),
                        _with((uniform(rng, 3, 4), _idx(2, 1).reshape(2, 1)), "broadcast index", dim=0),
                        _with((uniform(rng, 3, 1), _idx(0, 0, 0, 0).reshape(1, 4)), "broadcast input", dim=0),
                        _with((uniform(rng, 3, 4), _idx(11, 0, 4)), "flattened", dim=None),
                        _noncontig((uniform(rng, 4, 3), _idx(2, 0).reshape(2, 1)), dim=-1)],
           covers=("take_along_dim",)),
    OpInfo("take_along_dim", lambda lib, a, i: lib.take_along_dim(a, i, dim=1),
           lambda rng: [Sample((uniform(rng, 2, 3), _idx(2, 0).reshape(2, 1)))], covers=("take_along_dim",), variant_test_name="fn"),
    OpInfo("nonzero", lambda lib, a: a.nonzero(),
           lambda rng: [Sample(((rng.random((3, 4)) > 0.5).astype(np.float64),), grad=(False,), name="matrix"),
                        zero_d(Sample((np.array(1.0),), grad=(False,), name="0-d nonzero"), 0),
                        zero_d(Sample((np.array(0),), name="0-d zero"), 0),
                        Sample((np.zeros((0, 2)),), grad=(False,), name="empty")],
           gradcheck=False, covers=("nonzero",)),
    OpInfo("nonzero", lambda lib, a: lib.nonzero(a, as_tuple=True),
           lambda rng: [Sample((rng.random((3, 4)) > 0.5,), name="matrix"),
                        zero_d(Sample((np.array(True),), name="0-d"), 0)],
           gradcheck=False, covers=("nonzero",), variant_test_name="as_tuple"),
    OpInfo("argwhere", lambda lib, a: lib.argwhere(a), lambda rng: [Sample((rng.integers(0, 2, (2, 3)),))],
           gradcheck=False, covers=("argwhere",)),
    OpInfo("where", lambda lib, c: lib.where(c), lambda rng: [Sample((rng.random((3, 4)) > 0.5,))],
           gradcheck=False, covers=("where",), variant_test_name="single"),
    # -- broadcasting, grids, views --
    OpInfo("broadcast_to", lambda lib, a, size: a.broadcast_to(size),
           lambda rng: [Sample((uniform(rng, 2, 1), (3, 2, 4)), name="new dims"),
                        Sample((uniform(rng, 1, 3), (2, -1)), name="inferred size"),
                        zero_d(Sample((uniform(rng), (2,)), name="0-d"), 0),
                        Sample((uniform(rng, 1, 3), (0, 3)), name="empty")],
           covers=("broadcast_to",)),
    OpInfo("broadcast_to", lambda lib, a: lib.broadcast_to(a, (2, 3)), lambda rng: [Sample((uniform(rng, 3),))],
           covers=("broadcast_to",), variant_test_name="fn"),
    OpInfo("broadcast_tensors", lambda lib, *ts: lib.broadcast_tensors(*ts),
           lambda rng: [Sample((uniform(rng, 2, 1), uniform(rng, 3)), name="two"),
                        zero_d(Sample((uniform(rng, 2, 3), uniform(rng, 3), uniform(rng)), name="one already full"), 2),
                        Sample((uniform(rng, 0, 1), uniform(rng, 2)), name="empty")],
           covers=("broadcast_tensors",)),
    OpInfo("meshgrid", lambda lib, *ts, indexing: lib.meshgrid(*ts, indexing=indexing),
           lambda rng: [_with((uniform(rng, 2), uniform(rng, 3)), "ij", indexing="ij"),
                        _with((uniform(rng, 2), uniform(rng, 3), uniform(rng, 4)), "xy", indexing="xy"),
                        zero_d(_with((uniform(rng), uniform(rng, 3)), "0-d", indexing="ij"), 0)],
           covers=("meshgrid",)),
    OpInfo("meshgrid", lambda lib, a, b: lib.meshgrid([a, b], indexing="xy"),
           lambda rng: [Sample((uniform(rng, 3), uniform(rng, 2)))], covers=("meshgrid",), variant_test_name="list"),
    OpInfo("expand_as", lambda lib, a, b: a.expand_as(b),
           lambda rng: [Sample((uniform(rng, 3), uniform(rng, 2, 3)), grad=(True, False), name="new dim"),
                        zero_d(Sample((uniform(rng), uniform(rng, 2)), grad=(True, False), name="0-d"), 0)],
           covers=("expand_as",), variant_test_name="more"),
    OpInfo("view_as", lambda lib, a, b: a.view_as(b),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 3, 2)), grad=(True, False)),
                        zero_d(Sample((uniform(rng, 1), uniform(rng)), grad=(True, False), name="to 0-d"), 1)],
           covers=("view_as",)),
    OpInfo("reshape_as", lambda lib, a, b: a.reshape_as(b),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 6)), grad=(True, False)),
                        Sample((uniform(rng, 3, 2), uniform(rng, 6)), grad=(True, False), name="noncontiguous", noncontiguous=True)],
           covers=("reshape_as",)),
    OpInfo("flatten", lambda lib, a, start, end: lib.flatten(a, start, end),
           lambda rng: [Sample((uniform(rng, 2, 3, 4), 0, 1), name="leading"),
                        Sample((uniform(rng, 2, 3, 4), -2, -1), name="trailing"),
                        Sample((uniform(rng, 2, 3, 4), 1, 1), name="single dim"),
                        zero_d(Sample((uniform(rng), 0, -1), name="0-d"), 0),
                        Sample((uniform(rng, 3, 2, 4), 0, 1), name="noncontiguous", noncontiguous=True)],
           covers=("flatten",), variant_test_name="range"),
    OpInfo("ravel", lambda lib, a: a.ravel(), lambda rng: [Sample((uniform(rng, 3, 2),),
                                                                                name="noncontiguous", noncontiguous=True)],
           covers=("ravel",), variant_test_name="noncontiguous"),
    OpInfo("squeeze", lambda lib, a, dims: a.squeeze(dims),
           lambda rng: [Sample((uniform(rng, 1, 3, 1), (0, 2)), name="two"),
                        Sample((uniform(rng, 1, 3, 1), (-1, 1)), name="one not squeezable"),
                        zero_d(Sample((uniform(rng), (0,)), name="0-d"), 0)],
           covers=("squeeze",), variant_test_name="dims"),
    OpInfo("block_diag", lambda lib, *ts: lib.block_diag(*ts),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 1, 2)), name="matrices"),
                        zero_d(Sample((uniform(rng), uniform(rng, 3), uniform(rng, 2, 1)), name="0-d and vector"), 0),
                        Sample((uniform(rng, 0, 2), uniform(rng, 2, 2)), name="empty block"),
                        Sample((uniform(rng, 2, 2), np.array([[1, 2]])), name="promotion")],
           covers=("block_diag",)),
    # -- issue 12: scatter_reduce, index_reduce, index_fill, masked_scatter, put, index_put ... --
    OpInfo("scatter_reduce", lambda lib, a, s, i: tuple(a.scatter_reduce(1, i, s, r) for r in
                                                        ("sum", "prod", "mean", "amax", "amin")),
           lambda rng: [Sample((distinct(rng, 3, 4) + 0.25, distinct(rng, 3, 3) * 0.5 + 0.3,
                                _idx(0, 2, 0, 1, 1, 1, 3, 0, 3).reshape(3, 3)))]),
    OpInfo("scatter_reduce", lambda lib, a, s, i: tuple(lib.scatter_reduce(a, 0, i, s, r, include_self=False) for r in
                                                        ("sum", "prod", "mean", "amax", "amin")),
           lambda rng: [Sample((distinct(rng, 3, 2) + 0.25, distinct(rng, 4, 2) * 0.5 + 0.3,
                                _idx(0, 2, 0, 0, 2, 2, 0, 2).reshape(4, 2)))],
           covers=("scatter_reduce",), variant_test_name="exclude_self"),
    OpInfo("scatter_reduce", lambda lib, a, s, i: (a.scatter_reduce(0, i, s, "prod"),
                                                   a.scatter_reduce(0, i, s, "prod", include_self=False)),
           lambda rng: [Sample((np.array([[0.0, 2.0], [1.5, -1.0]]), np.array([[0.0, 3.0], [0.7, 0.0], [2.0, 1.1]]),
                                _idx(0, 1, 0, 1, 1, 1).reshape(3, 2)))],
           covers=("scatter_reduce",), variant_test_name="prod_zeros"),
    OpInfo("scatter_reduce", lambda lib, a, s, i: (a.scatter_reduce(0, i, s, "amax"), a.scatter_reduce(0, i, s, "amin")),
           lambda rng: [Sample((np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 5.0], [1.0, 2.0]]),
                                _idx(0, 0, 0, 0).reshape(2, 2)))],
           covers=("scatter_reduce",), gradcheck=False, gradgradcheck=False, variant_test_name="ties"),
    OpInfo("scatter_reduce_", lambda lib, a, s, i: (a * 1).scatter_reduce_(1, i, s, "mean", include_self=False),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 2, 2), _idx(2, 2, 0, 1).reshape(2, 2)))],
           covers=("scatter_reduce_",)),
    OpInfo("scatter_reduce", lambda lib, a, s, i: (a.scatter_reduce(0, i, s, "sum"), a.scatter_reduce(0, i, s, "mean")),
           lambda rng: [Sample((np.array([1, 2, 3]), np.array([4, -5, 6]), _idx(0, 0, 1)))],
           covers=("scatter_reduce",), variant_test_name="int"),
    OpInfo("index_reduce", lambda lib, a, s, i: tuple(a.index_reduce(0, i, s, r) for r in
                                                      ("prod", "mean", "amax", "amin")),
           lambda rng: [Sample((distinct(rng, 3, 2) + 0.25, distinct(rng, 4, 2) * 0.5 + 0.3, _idx(0, 2, 0, 0)))]),
    OpInfo("index_reduce", lambda lib, a, s, i: tuple(lib.index_reduce(a, 1, i, s, r, include_self=False) for r in
                                                      ("prod", "mean", "amax", "amin")),
           lambda rng: [Sample((distinct(rng, 2, 3) + 0.25, distinct(rng, 2, 2) * 0.5 + 0.3, _idx(2, 2)))],
           covers=("index_reduce",), variant_test_name="exclude_self"),
    OpInfo("index_reduce_", lambda lib, a, s, i: (a * 1).index_reduce_(0, i, s, "prod"),
           lambda rng: [Sample((np.array([[0.0, 2.0], [1.5, -1.0]]), np.array([[0.0, 3.0], [0.7, 0.5]]), _idx(0, 0)))],
           covers=("index_reduce_",)),
    OpInfo("index_fill", lambda lib, a, i: (a.index_fill(1, i, -1.5), lib.index_fill(a, 0, i[:1], 2),
                                            (a * 1).index_fill_(-1, i, 0.5)),
           lambda rng: [Sample((uniform(rng, 3, 4), _idx(0, 3, 0))), _noncontig((uniform(rng, 4, 3), _idx(2, -1)))],
           covers=("index_fill", "index_fill_")),
    OpInfo("index_fill", lambda lib, a, v, i: (a.index_fill(0, i, v), lib.index_fill(a, 1, i, v)),
           lambda rng: [zero_d(Sample((uniform(rng, 3, 3), uniform(rng, 1), _idx(1, 1, 2))), 1)],
           covers=("index_fill",), variant_test_name="tensor_value"),
    OpInfo("masked_scatter", lambda lib, a, s, m: (a.masked_scatter(m, s), lib.masked_scatter(a, m[0], s),
                                                   (a * 1).masked_scatter_(m, s)),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 14),
                                np.array([[True, False, True, False], [False, False, True, True],
                                          [True, True, False, False]])))],
           covers=("masked_scatter", "masked_scatter_")),
    OpInfo("put", lambda lib, a, s, i: (a.put(i, s), lib.put(a, i, s, accumulate=True), (a * 1).put_(i, s)),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 2, 2), _idx(1, -1, 5, 0).reshape(2, 2)))],
           covers=("put", "put_")),
    OpInfo("put", lambda lib, a, s, i: (lib.put(a, i, s, accumulate=True), (a * 1).put_(i, s, accumulate=True)),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 3), _idx(7, 7, 2)))],
           covers=("put", "put_"), variant_test_name="repeated_accumulate"),
    OpInfo("index_put", lambda lib, a, v, i, j: (a.index_put((i, j), v), lib.index_put(a, (i,), v[:1, None], True),
                                                 lib.index_put_(a * 1, (i, j), v, accumulate=True)),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 3), _idx(0, 2, 0), _idx(1, 1, 3)))],
           covers=("index_put", "index_put_")),
    OpInfo("nonzero_static", lambda lib, a: (lib.nonzero_static(a, size=3), a.nonzero_static(size=6, fill_value=9)),
           lambda rng: [Sample((np.array([[0, 1, 3], [2, 0, 0]]),)), Sample((np.array([0.0, 1.5, 0.0]),), grad=(False,))]),
    OpInfo("unravel_index", lambda lib, i: lib.unravel_index(i, (3, 4)),
           lambda rng: [Sample((_idx(0, 5, 11, 13, -1),))]),
    OpInfo("isin", lambda lib, a, b: (lib.isin(a, b), lib.isin(a, b, invert=True), lib.isin(a, 2), lib.isin(3, b)),
           lambda rng: [Sample((np.array([[1, 2], [3, 7]]), _idx(2, 3, 5))),
                        Sample((np.array([1.5, 2.0, 3.0]), np.array([2.0, 4.0])), grad=(False, False), name="float")]),
    OpInfo("rot90", lambda lib, a, k, dims: lib.rot90(a, k, dims),
           lambda rng: [Sample((uniform(rng, 2, 3), 1, [0, 1]), name="once"),
                        Sample((uniform(rng, 2, 3, 4), 2, [2, 0]), name="twice, 3-d"),
                        Sample((uniform(rng, 2, 3), -1, [1, 0]), name="negative k"),
                        Sample((uniform(rng, 2, 3), 4, [0, -1]), name="full turn"),
                        Sample((uniform(rng, 3, 2), 3, [0, 1]), name="noncontiguous", noncontiguous=True)],
           covers=("rot90",)),
    OpInfo("rot90", lambda lib, a: a.rot90(), lambda rng: [Sample((uniform(rng, 2, 3),))], covers=("rot90",),
           variant_test_name="method"),
    OpInfo("unsafe_split", lambda lib, a, size, dim: lib.unsafe_split(a, size, dim),
           lambda rng: [Sample((uniform(rng, 5, 2), 2, 0), name="uneven"),
                        Sample((uniform(rng, 2, 4), 2, -1), name="last dim")],
           covers=("unsafe_split",)),
    OpInfo("unsafe_split_with_sizes", lambda lib, a: a.unsafe_split_with_sizes([2, 1], 1),
           lambda rng: [Sample((uniform(rng, 2, 3),))], covers=("unsafe_split_with_sizes",)),
    OpInfo("unsafe_chunk", lambda lib, a, chunks, dim: lib.unsafe_chunk(a, chunks, dim),
           lambda rng: [Sample((uniform(rng, 5, 2), 2, 0), name="uneven"),
                        Sample((uniform(rng, 2, 3), 3, 1), name="one each")],
           covers=("unsafe_chunk",)),
    OpInfo("diagflat", lambda lib, a, offset: lib.diagflat(a, offset),
           lambda rng: [Sample((uniform(rng, 3), 0), name="vector"),
                        Sample((uniform(rng, 2, 2), -1), name="matrix below"),
                        zero_d(Sample((uniform(rng), 2), name="0-d above"), 0)],
           covers=("diagflat",)),
    OpInfo("atleast_3d", lambda lib, a, b, c: lib.atleast_3d(a, b, c),
           lambda rng: [zero_d(Sample((uniform(rng), uniform(rng, 3), uniform(rng, 2, 3))), 0)],
           covers=("atleast_1d", "atleast_2d", "atleast_3d")),
    OpInfo("atleast_2d", lambda lib, a, b: lib.atleast_2d([a, b]),
           lambda rng: [zero_d(Sample((uniform(rng), uniform(rng, 3))), 0)], covers=("atleast_2d",)),
    OpInfo("atleast_1d", lambda lib, a: lib.atleast_1d(a),
           lambda rng: [zero_d(Sample((uniform(rng),)), 0)], covers=("atleast_1d",)),
    OpInfo("hstack", lambda lib, a, b: lib.hstack([a, b]),
           lambda rng: [Sample((uniform(rng, 2), uniform(rng, 3)), name="vectors"),
                        Sample((uniform(rng, 2, 1), uniform(rng, 2, 3)), name="matrices")],
           covers=("hstack",)),
    OpInfo("vstack", lambda lib, a, b: lib.vstack((a, b)),
           lambda rng: [Sample((uniform(rng, 3), uniform(rng, 2, 3)), name="vector and matrix"),
                        zero_d(Sample((uniform(rng), uniform(rng, 1))), 0)],
           covers=("vstack", "row_stack")),
    OpInfo("dstack", lambda lib, a, b: lib.dstack([a, b]),
           lambda rng: [Sample((uniform(rng, 3), uniform(rng, 1, 3, 2)), name="vector and 3-d"),
                        Sample((uniform(rng, 2, 3), uniform(rng, 2, 3)), name="matrices")],
           covers=("dstack",)),
    OpInfo("column_stack", lambda lib, a, b, c: lib.column_stack([a, b, c]),
           lambda rng: [zero_d(Sample((uniform(rng), uniform(rng, 1), uniform(rng, 1, 2))), 0),
                        Sample((uniform(rng, 3), uniform(rng, 3, 2), uniform(rng, 3)), name="vectors and matrix")],
           covers=("column_stack",)),
    OpInfo("cartesian_prod", lambda lib, a, b, c: lib.cartesian_prod(a, b, c),
           lambda rng: [Sample((uniform(rng, 2), uniform(rng, 3), uniform(rng, 2)))], covers=("cartesian_prod",)),
    OpInfo("combinations", lambda lib, a, r, rep: lib.combinations(a, r, rep),
           lambda rng: [Sample((uniform(rng, 4), 2, False), name="pairs"),
                        Sample((uniform(rng, 3), 3, True), name="with replacement")],
           covers=("combinations",)),
    OpInfo("adjoint", lambda lib, a: lib.adjoint(a), lambda rng: [Sample((uniform(rng, 2, 2, 3),))],
           covers=("adjoint",)),
    OpInfo("mH", lambda lib, a: a.mH, lambda rng: [Sample((uniform(rng, 2, 3, 2),))], covers=("mH",)),
    OpInfo("H", lambda lib, a: a.H, lambda rng: [Sample((uniform(rng, 2, 3),))], covers=("H",)),
    OpInfo("select_scatter", lambda lib, a, src, dim, index: lib.select_scatter(a, src, dim, index),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 4), 0, 1), name="row"),
                        Sample((uniform(rng, 3, 4), uniform(rng, 3), -1, -1), name="last column"),
                        Sample((uniform(rng, 4, 3), uniform(rng, 3), 1, 0), name="noncontiguous",
                               noncontiguous=True)],
           covers=("select_scatter",)),
    OpInfo("slice_scatter", lambda lib, a, src, dim, start, end, step: a.slice_scatter(src, dim, start, end, step),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 3, 2), 1, 0, 4, 2), name="strided"),
                        Sample((uniform(rng, 3, 4), uniform(rng, 3, 2), 1, -2, None, 1), name="negative start"),
                        Sample((uniform(rng, 3, 4), uniform(rng, 1, 4), 0, 1, 2, 1), name="one row")],
           covers=("slice_scatter",)),
    OpInfo("diagonal_scatter", lambda lib, a, src, offset, d1, d2: lib.diagonal_scatter(a, src, offset, d1, d2),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 3), 0, 0, 1), name="main"),
                        Sample((uniform(rng, 3, 4), uniform(rng, 3), -1, 1, 0), name="below, dims swapped"),
                        Sample((uniform(rng, 2, 3, 3), uniform(rng, 3, 2), 1, 0, 2), name="batched")],
           covers=("diagonal_scatter",)),
    OpInfo("unfold", lambda lib, a, dim, size, step: a.unfold(dim, size, step),
           lambda rng: [Sample((uniform(rng, 3, 4), 1, 2, 1), name="overlapping"),
                        Sample((uniform(rng, 3, 5), 1, 2, 2), name="strided, rest dropped"),
                        Sample((uniform(rng, 3, 4), 0, 3, 1), name="whole dim"),
                        zero_d(Sample((uniform(rng), 0, 1, 1), name="0-d"), 0),
                        Sample((uniform(rng, 4, 3), -1, 2, 1), name="noncontiguous", noncontiguous=True)],
           covers=("unfold",), variant_test_name="tensor_method"),
]


for _op in OPS:
    _op.fn = _accepting_zero_d(_op.fn)
