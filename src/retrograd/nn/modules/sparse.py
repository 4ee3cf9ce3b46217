"""Lookup tables: ``Embedding`` and ``EmbeddingBag`` (gradients are always dense here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import factories
from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _padding_index(padding_idx: int | None, num_embeddings: int, message: str) -> int | None:
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num_embeddings:
                raise AssertionError(message)
        elif padding_idx < 0:
            if padding_idx < -num_embeddings:
                raise AssertionError(message)
            padding_idx = num_embeddings + padding_idx
    return padding_idx


class _Lookup(Module):
    weight: Tensor
    padding_idx: int | None
    max_norm: float | None
    norm_type: float
    scale_grad_by_freq: bool

    def reset_parameters(self) -> None:
        """Weights from N(0, 1); the ``padding_idx`` row zeroed."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def _norm_repr(self, show: Callable[[Any], str]) -> str:
        """The ``max_norm``, ``norm_type`` and ``scale_grad_by_freq`` part of ``extra_repr`` (those not at
        their defaults); ``show`` is ``format`` for ``Embedding``, ``repr`` for ``EmbeddingBag`` as in PyTorch."""
        s = ""
        if self.max_norm is not None:
            s += f", max_norm={show(self.max_norm)}"
        if self.norm_type != 2:
            s += f", norm_type={show(self.norm_type)}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={show(self.scale_grad_by_freq)}"
        return s

    def _make_weight(self, num_embeddings: int, embedding_dim: int, weight: Tensor | None, requires_grad: bool,
                     device: Any, dtype: Any) -> None:
        if weight is None:
            self.weight = Parameter(factories.empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                                    requires_grad=requires_grad)
            self.reset_parameters()
        else:
            if list(weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(weight, requires_grad=requires_grad)


class Embedding(_Lookup):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, looked up by index.

    >>> import retrograd as rg
    >>> emb = rg.nn.Embedding(10, 3, padding_idx=0)
    >>> emb, emb(rg.tensor([[0, 2], [4, 9]])).shape, emb.weight[0].tolist()
    (Embedding(10, 3, padding_idx=0), torch.Size([2, 2, 3]), [0.0, 0.0, 0.0])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "Padding_idx must be within num_embeddings")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self._make_weight(num_embeddings, embedding_dim, _weight, not _freeze, device, dtype)
        self.sparse = sparse

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        s += self._norm_repr(format)
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An ``Embedding`` whose weight is ``embeddings`` (shared, frozen unless ``freeze=False``).

        >>> import retrograd as rg
        >>> emb = rg.nn.Embedding.from_pretrained(rg.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> emb(rg.tensor([1])).tolist(), emb.weight.requires_grad
        ([[3.0, 4.0]], False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(_Lookup):
    """Sums, means or maxima of bags of embeddings, without building the embeddings in between.

    >>> import retrograd as rg
    >>> bag = rg.nn.EmbeddingBag(10, 3, mode='sum')
    >>> bag, bag(rg.tensor([1, 2, 4, 5]), rg.tensor([0, 2])).shape
    (EmbeddingBag(10, 3, mode='sum'), torch.Size([2, 3]))
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "padding_idx must be within num_embeddings")
        self._make_weight(num_embeddings, embedding_dim, _weight, True, device, dtype)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def forward(self, input: Tensor, offsets: Tensor | None = None,  # noqa: A002
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        s += self._norm_repr(repr)
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An ``EmbeddingBag`` whose weight is ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
