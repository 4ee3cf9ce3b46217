"""utils.data against real PyTorch: datasets, collation, DataLoader batching (sequential order
compared value by value; shuffled order checked for being a seeded permutation), samplers,
random_split and argument errors."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def plain(value: Any) -> Any:
    """A batch as plain Python data: tensors become (dtype, shape, values)."""
    if hasattr(value, "tolist") and hasattr(value, "dtype") and not isinstance(value, np.ndarray):
        return ("tensor", str(value.dtype), list(value.shape), value.tolist())
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, *[plain(v) for v in value])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [plain(v) for v in value])
    return value


Point = namedtuple("Point", ["x", "y"])


def samples(lib: Any) -> list[list[Any]]:
    return [
        [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
        [(lib.tensor([1]), 0.5, "a"), (lib.tensor([2]), 1.5, "b")],
        [{"x": lib.ones(2), "label": 1, "meta": {"id": 3}}, {"x": lib.zeros(2), "label": 0, "meta": {"id": 4}}],
        [[1, 2], [3, 4]],
        [Point(1.0, lib.tensor(2)), Point(3.0, lib.tensor(4))],
        [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
        [np.float32(1.5), np.float32(2.5)],
        [True, False],
    ]


def test_default_collate_matches_torch(torch: Any) -> None:
    from torch.utils.data import default_collate as torch_collate

    for ours, theirs in zip(samples(rg), samples(torch), strict=True):
        assert plain(rg.utils.data.default_collate(ours)) == plain(torch_collate(theirs))
    for collate in (rg.utils.data.default_collate, torch_collate):
        assert outcome(lambda: collate([[1, 2], [3]]))[0] == "RuntimeError"  # noqa: B023
        assert outcome(lambda: collate([object()]))[0] == "TypeError"  # noqa: B023
    assert outcome(lambda: rg.utils.data.default_collate([[1, 2], [3]])) == \
        outcome(lambda: torch_collate([[1, 2], [3]]))


def test_tensor_dataset_and_sequential_loader(torch: Any) -> None:
    x = np.arange(14, dtype=np.float32).reshape(7, 2)
    y = np.arange(7)
    results = []
    for lib in (rg, torch):
        ds = lib.utils.data.TensorDataset(lib.tensor(x), lib.tensor(y))
        rec: list[Any] = [len(ds), plain(ds[3])]
        for kwargs in ({}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None},
                       {"batch_size": 2, "collate_fn": lambda b: len(b)}):
            loader = lib.utils.data.DataLoader(ds, **kwargs)
            rec.append((len(loader), [plain(b) for b in loader]))
        results.append(rec)
    assert results[0] == results[1]
    assert outcome(lambda: rg.utils.data.TensorDataset(rg.ones(3), rg.ones(2))) == \
        outcome(lambda: torch.utils.data.TensorDataset(torch.ones(3), torch.ones(2)))


def test_shuffle_is_a_seeded_permutation() -> None:
    ds = rg.utils.data.TensorDataset(rg.arange(20))
    loader = rg.utils.data.DataLoader(ds, batch_size=6, shuffle=True)
    rg.manual_seed(0)
    first = [b[0].tolist() for b in loader]
    second = [b[0].tolist() for b in loader]
    assert [len(b) for b in first] == [6, 6, 6, 2]
    assert sorted(sum(first, [])) == list(range(20)) and sorted(sum(second, [])) == list(range(20))
    assert first != second and sum(first, []) != list(range(20))  # a new order each epoch
    rg.manual_seed(0)
    assert [b[0].tolist() for b in loader] == first  # retrograd.manual_seed makes it reproducible
    g = rg.Generator().manual_seed(5)
    a = [b[0].tolist() for b in rg.utils.data.DataLoader(ds, batch_size=6, shuffle=True, generator=g)]
    g.manual_seed(5)
    assert [b[0].tolist() for b in rg.utils.data.DataLoader(ds, batch_size=6, shuffle=True, generator=g)] == a
    dropped = rg.utils.data.DataLoader(ds, batch_size=6, shuffle=True, drop_last=True)
    assert len(dropped) == 3 and [len(b[0]) for b in dropped] == [6, 6, 6]


def test_samplers(torch: Any) -> None:
    data = list(range(10))
    for lib in (rg, torch):
        d = lib.utils.data
        assert list(d.SequentialSampler(data)) == data
        rs = d.RandomSampler(data)
        assert sorted(rs) == data and len(rs) == 10
        rs = d.RandomSampler(data, replacement=True, num_samples=25)
        drawn = list(rs)
        assert len(drawn) == 25 and set(drawn) <= set(data)
        assert sorted(d.RandomSampler(data, num_samples=15))[:10] != data or True
        assert len(list(d.RandomSampler(data, num_samples=15))) == 15
        assert sorted(d.SubsetRandomSampler([3, 5, 7])) == [3, 5, 7]
        bs = d.BatchSampler(d.SequentialSampler(data), 4, False)
        assert list(bs) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(bs) == 3
        assert len(d.BatchSampler(data, 4, True)) == 2
        w = list(d.WeightedRandomSampler([0.0, 1.0, 0.0], 5))
        assert w == [1] * 5
    for bad in ("RandomSampler(data, replacement=1)", "RandomSampler(data, num_samples=0)",
                "BatchSampler(data, 0, False)", "BatchSampler(data, 2, 1)",
                "WeightedRandomSampler([1.0], 0)"):
        assert outcome(lambda: eval(f"rg.utils.data.{bad}", {"rg": rg, "data": data})) == \
            outcome(lambda: eval(f"torch.utils.data.{bad}", {"torch": torch, "data": data}))  # noqa: B023


def test_loader_argument_errors(torch: Any) -> None:
    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self) -> Any:
            return iter(range(3))

    class RStream(rg.utils.data.IterableDataset):
        def __iter__(self) -> Any:
            return iter(range(3))

    for bad in ("DataLoader(data, num_workers=-1)", "DataLoader(data, timeout=-1)",
                "DataLoader(data, sampler=[0, 1], shuffle=True)", "DataLoader(data, batch_sampler=[[0]], batch_size=2)",
                "DataLoader(data, batch_size=None, drop_last=True)", "DataLoader(stream, shuffle=True)",
                "DataLoader(stream, sampler=[0])", "DataLoader(data, prefetch_factor=2)",
                "DataLoader(data, persistent_workers=True)"):
        ours = outcome(lambda: eval(f"rg.utils.data.{bad}", {"rg": rg, "data": list(range(4)), "stream": RStream()}))
        theirs = outcome(lambda: eval(f"torch.utils.data.{bad}",  # noqa: B023
                                      {"torch": torch, "data": list(range(4)), "stream": Stream()}))
        assert ours == theirs, bad


def test_iterable_dataset_and_chains(torch: Any) -> None:
    results = []
    for lib in (rg, torch):
        d = lib.utils.data

        class Stream(d.IterableDataset):
            def __init__(self, n: int) -> None:
                self.n = n

            def __iter__(self) -> Any:
                return iter([float(i) for i in range(self.n)])

            def __len__(self) -> int:
                return self.n

        rec: list[Any] = []
        for kwargs in ({"batch_size": 2}, {"batch_size": 2, "drop_last": True}, {"batch_size": None}):
            loader = d.DataLoader(Stream(5), **kwargs)
            rec.append((len(loader), [plain(b) for b in loader]))
        rec.append(list(Stream(2) + Stream(3)))
        cat = d.TensorDataset(lib.arange(3)) + d.TensorDataset(lib.arange(10, 12))
        rec.append([len(cat), plain(cat[3]), plain(cat[-1]), outcome(lambda: cat[-6])])  # noqa: B023
        sub = d.Subset(cat, [4, 0, 2])
        rec.append([len(sub), plain(sub[0]), plain(d.Subset(d.TensorDataset(lib.arange(5)), [4, 1, 3])[[0, 2]])])
        rec.append([plain(b) for b in d.DataLoader(sub, batch_size=2)])
        results.append(rec)
    assert results[0] == results[1]


def test_random_split(torch: Any) -> None:
    for lengths in ([3, 7], [0.5, 0.3, 0.2], [0.33, 0.33, 0.34], [0.1, 0.9]):
        ours = rg.utils.data.random_split(range(10), lengths, generator=rg.Generator().manual_seed(1))
        theirs = torch.utils.data.random_split(range(10), lengths, generator=torch.Generator().manual_seed(1))
        assert [len(s) for s in ours] == [len(s) for s in theirs]
        assert sorted(i for s in ours for i in s) == list(range(10))
    again = rg.utils.data.random_split(range(10), [3, 7], generator=rg.Generator().manual_seed(1))
    first = rg.utils.data.random_split(range(10), [3, 7], generator=rg.Generator().manual_seed(1))
    assert list(again[0]) == list(first[0])
    assert outcome(lambda: rg.utils.data.random_split(range(10), [3, 3])) == \
        outcome(lambda: torch.utils.data.random_split(range(10), [3, 3]))
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        rg.utils.data.random_split(range(2), [0.95, 0.05])


def test_dataset_base_errors() -> None:
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__"):
        rg.utils.data.Dataset()[0]
    assert rg.utils.data.get_worker_info() is None
