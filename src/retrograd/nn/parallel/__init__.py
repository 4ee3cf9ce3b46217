"""``retrograd.nn.parallel``: ``DistributedDataParallel`` (over ``retrograd.distributed``)."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
