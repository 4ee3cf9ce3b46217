"""``retrograd.random``: PyTorch's CPU generator (the same numbers after the same seed).

A ``Generator`` is PyTorch's ``CPUGeneratorImpl``: an mt19937 engine seeded with the (64-bit)
seed's low 32 bits, plus a cached second normal. Its state is PyTorch's 5056-byte layout, so a
state taken from ``torch.get_rng_state()`` loads here and the reverse. The engine and the sampling
transforms live in ``retrograd._random``; ``numpy.random`` is imported at the first draw only.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from .tensor import Tensor, device

if TYPE_CHECKING:
    from ._random import CPUStream

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state"]

_DEFAULT_SEED = 67280421310721  # PyTorch's default_rng_seed_val: a new Generator's seed


def _fresh_seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


def _seed_value(seed: Any) -> int:
    """PyTorch's conversion of a seed: a 64-bit integer, negative ones wrapped (-1 -> 2**64 - 1)."""
    if isinstance(seed, Tensor):
        seed = seed.item()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -2**63 <= seed < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return seed & 0xFFFFFFFFFFFFFFFF


class Generator:
    """A CPU random-number generator with PyTorch's stream, API and state layout.

    >>> import retrograd as rg
    >>> g = rg.Generator().manual_seed(0)
    >>> rg.rand(2, generator=g).tolist() == rg.rand(2, generator=rg.Generator().manual_seed(0)).tolist()
    True
    """

    def __init__(self, device: Any = "cpu") -> None:  # noqa: A002 - PyTorch's keyword
        self._device = _cpu_device(device)
        self._initial_seed: int | None = _DEFAULT_SEED
        self._stream: CPUStream | None = None  # built at the first draw (numpy.random's import)

    @property
    def device(self) -> device:
        return self._device

    @property
    def stream(self) -> CPUStream:
        """The engine, created on first use."""
        if self._stream is None:
            if self._initial_seed is None:
                self._initial_seed = _fresh_seed()
            from ._random import CPUStream

            self._stream = CPUStream(self._initial_seed)
        return self._stream

    def manual_seed(self, seed: Any) -> Generator:
        """Seed the engine (and drop the cached normal); returns the generator."""
        value = _seed_value(seed)
        self._initial_seed = value
        if self._stream is not None:
            self._stream.reseed(value)
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns that seed."""
        value = _fresh_seed()
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed last set."""
        if self._stream is not None:
            return self._stream.seed
        if self._initial_seed is None:
            self._initial_seed = _fresh_seed()
        return self._initial_seed

    def get_state(self) -> Tensor:
        """The state as a uint8 tensor in PyTorch's ``CPUGeneratorImplState`` layout (5056 bytes).

        >>> import retrograd as rg
        >>> g = rg.Generator().manual_seed(3)
        >>> s = g.get_state(); a = rg.rand(3, generator=g)
        >>> rg.equal(rg.rand(3, generator=g.set_state(s)), a)
        True
        """
        return Tensor._make(self.stream.get_state())

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state from ``get_state`` (ours or PyTorch's); returns the generator."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        data = new_state._data
        if data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        self.stream.set_state(data.reshape(-1))
        self._initial_seed = self.stream.seed
        return self

    def __repr__(self) -> str:
        return f"<retrograd.Generator object at {id(self):#x}>"


def _cpu_device(dev: Any) -> device:
    d = device(dev) if not isinstance(dev, device) else dev
    if d.type != "cpu":
        raise RuntimeError(f"Device type {d.type.upper()} is not supported for torch.Generator() api.")
    return d


default_generator = Generator()
default_generator._initial_seed = None  # like PyTorch's: seeded from entropy unless manual_seed is called


def manual_seed(seed: Any) -> Generator:
    """Seed the default generator; returns it (``torch.manual_seed``).

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0); a = rg.rand(2); _ = rg.manual_seed(0); rg.equal(a, rg.rand(2))
    True
    """
    if isinstance(seed, (float, str)) or isinstance(seed, np.floating):
        seed = int(seed)  # torch.manual_seed converts with int() first
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (a uint8 tensor of PyTorch's layout).

    >>> import retrograd as rg
    >>> rg.get_rng_state().shape
    torch.Size([5056])
    """
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Iterator[None]:
    """Run a block with the default generator's state restored afterwards.

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> with rg.random.fork_rng():
    ...     a = rg.rand(3)
    >>> rg.equal(rg.rand(3), a)
    True
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
