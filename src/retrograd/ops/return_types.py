"""Named tuples returned by ops with several outputs, as ``torch.return_types``."""

from __future__ import annotations

from typing import NamedTuple

from ..tensor import Tensor


class max(NamedTuple):  # noqa: N801, A001 - PyTorch's names
    values: Tensor
    indices: Tensor


class min(NamedTuple):  # noqa: N801, A001
    values: Tensor
    indices: Tensor


class sort(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class topk(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class kthvalue(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class median(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class mode(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class nanmedian(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor
