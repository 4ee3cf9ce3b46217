"""``DistributedSampler``: each process of a data-parallel job reads its own share of a dataset."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import Any

from ...factories import randperm
from ...random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Rank ``rank``'s indices out of ``num_replicas`` equal shares of ``dataset``.

    With ``shuffle`` the order is a permutation drawn from a generator seeded with
    ``seed + epoch`` (call ``set_epoch`` each epoch; the same permutation as PyTorch's for the same
    seed and epoch); rank r takes every ``num_replicas``-th index from position r. Without
    ``drop_last`` the list is padded with its own first indices to a multiple of ``num_replicas``;
    with it, the tail that does not divide evenly is dropped. ``num_replicas``/``rank`` default to
    the default process group's.

    >>> from retrograd.utils.data.distributed import DistributedSampler
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        # drop_last keeps floor(n / replicas) each; otherwise every share is ceil(n / replicas) long
        self.num_samples = n // num_replicas if drop_last else math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        if self.shuffle:
            order: list[int] = randperm(n, generator=Generator().manual_seed(self.seed + self.epoch)).tolist()
        else:
            order = list(range(n))
        if self.total_size > n:  # pad by repeating the order from its start, as often as needed
            order = (order * math.ceil(self.total_size / max(n, 1)))[: self.total_size]
        else:
            order = order[: self.total_size]
        return iter(order[self.rank: self.total_size: self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose permutation the next iteration draws (``seed + epoch``)."""
        self.epoch = epoch
