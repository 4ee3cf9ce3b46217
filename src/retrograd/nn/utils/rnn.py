"""Variable-length sequences for the recurrent layers: ``PackedSequence``, ``pack_padded_sequence``,
``pad_packed_sequence``, ``pad_sequence``, ``unpad_sequence``, ``pack_sequence``,
``unpack_sequence``, ``invert_permutation`` (PyTorch's ``torch.nn.utils.rnn``).

A packed sequence keeps the batch sorted by decreasing length and stores it time step by time
step: ``data`` holds step 0 of every sequence, then step 1 of those still running, and so on;
``batch_sizes[t]`` says how many sequences run at step ``t``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from ... import _dtype, factories
from ...tensor import Tensor

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
    "pad_sequence", "unpack_sequence", "unpad_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(value: Tensor | None, fn: Any) -> Tensor | None:
    return None if value is None else fn(value)


class PackedSequence(PackedSequence_):
    """A batch of sequences of different lengths, packed (see the module's docstring). Made by
    ``pack_padded_sequence`` / ``pack_sequence``, accepted by the recurrent layers.

    >>> import retrograd as rg
    >>> p = rg.nn.utils.rnn.pack_sequence([rg.tensor([1., 2., 3.]), rg.tensor([4., 5.])])
    >>> p.data.tolist(), p.batch_sizes.tolist()
    ([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
    """

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            # ``PackedSequence((data, batch_sizes), sorted_indices)``
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data`` converted as ``Tensor.to`` does (``batch_sizes`` stays as it is); ``self`` when
        nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cpu")

    def pin_memory(self) -> PackedSequence:
        return self

    def double(self) -> PackedSequence:
        return self.to(dtype=_dtype.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=_dtype.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=_dtype.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=_dtype.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=_dtype.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=_dtype.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=_dtype.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=_dtype.uint8)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse permutation (``None`` stays ``None``).

    >>> import retrograd as rg
    >>> rg.nn.utils.rnn.invert_permutation(rg.tensor([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    if permutation is None:
        return None
    out = factories.empty_like(permutation)
    out.scatter_(0, permutation, factories.arange(0, permutation.numel()))
    return out


def _lengths_array(lengths: Any) -> np.ndarray:
    if isinstance(lengths, Tensor):
        # (PyTorch converts a tensor to int64 first: the message always says Long.)
        arr = np.asarray(lengths._data).astype(np.int64)
    else:
        arr = np.asarray(lengths, dtype=np.int64)
    if arr.ndim != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {arr.ndim}D cpu Long tensor")
    return arr


def _packed_index(lengths: np.ndarray, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """Row indices into a time-major ``(T * batch, ...)`` view for each packed row, and
    ``batch_sizes``."""
    steps = int(lengths[0])
    batch_sizes = (lengths[None, :] > np.arange(steps)[:, None]).sum(1)
    rows = np.concatenate([t * batch + np.arange(b) for t, b in enumerate(batch_sizes)])
    return rows.astype(np.int64), batch_sizes.astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences of the
    given ``lengths``. With ``enforce_sorted`` the lengths must decrease; otherwise the batch is
    sorted here and ``sorted_indices`` records how.

    >>> import retrograd as rg
    >>> x = rg.tensor([[1., 4.], [2., 5.], [3., 0.]])
    >>> rg.nn.utils.rnn.pack_padded_sequence(x, [3, 2]).data.tolist()
    [1.0, 4.0, 2.0, 5.0, 3.0]
    """
    lens = _lengths_array(lengths)
    sorted_indices = None
    if not enforce_sorted:
        # PyTorch sorts stably by decreasing length.
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = factories.tensor(order.astype(np.int64))
        input = input.index_select(0 if batch_first else 1, sorted_indices)  # noqa: A001
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if batch_first:
        input = input.transpose(0, 1)  # noqa: A001
    steps, batch = input.shape[0], input.shape[1]
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={batch})")
    if np.any(lens[1:] > lens[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
            "if you do not need ONNX exportability.")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lens[0] > steps:
        # PyTorch reads past the end of the input here; refuse instead.
        raise RuntimeError(f"pack_padded_sequence: a length ({int(lens[0])}) exceeds the sequence length ({steps})")
    rows, batch_sizes = _packed_index(lens, batch)
    flat = input.reshape(steps * batch, *input.shape[2:])
    data = flat.index_select(0, factories.tensor(rows))
    return PackedSequence(data, factories.tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo ``pack_padded_sequence``: the padded batch (padded with ``padding_value`` to the
    longest sequence, or to ``total_length``) and the lengths, in the original batch order.

    >>> import retrograd as rg
    >>> p = rg.nn.utils.rnn.pack_sequence([rg.tensor([1., 2., 3.]), rg.tensor([4., 5.])])
    >>> x, lengths = rg.nn.utils.rnn.pad_packed_sequence(p, batch_first=True)
    >>> x.tolist(), lengths.tolist()
    ([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]], [3, 2])
    """
    batch_sizes = np.asarray(sequence.batch_sizes._data).astype(np.int64)
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    batch = int(batch_sizes[0])
    trailing = tuple(data.shape[1:])
    padded = factories.full((max_seq_length, batch, *trailing), padding_value, dtype=data.dtype)
    lens = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1).astype(np.int64)
    rows, _ = _packed_index(lens, batch)
    # One write through a view: the result's history is PyTorch's ``CopySlices``.
    padded.view(max_seq_length * batch, *trailing)[factories.tensor(rows)] = data
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = factories.tensor(lens)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return padded, lengths


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of shape ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` with
    ``batch_first``), padding with ``padding_value`` on ``padding_side``.

    >>> import retrograd as rg
    >>> rg.nn.utils.rnn.pad_sequence([rg.tensor([1., 2.]), rg.tensor([3.])], batch_first=True).tolist()
    [[1.0, 2.0], [3.0, 0.0]]
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    seqs = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in seqs)
    trailing = tuple(seqs[0].shape[1:])
    shape = (len(seqs), max_len, *trailing) if batch_first else (max_len, len(seqs), *trailing)
    out = factories.full(shape, padding_value, dtype=seqs[0].dtype)
    for i, seq in enumerate(seqs):
        n = seq.shape[0]
        start = 0 if padding_side == "right" else max_len - n
        if batch_first:
            out[i, start:start + n] = seq
        else:
            out[start:start + n, i] = seq
    return out


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    """Split a padded batch back into its sequences (the inverse of ``pad_sequence``).

    >>> import retrograd as rg
    >>> x = rg.tensor([[1., 2.], [3., 0.]])
    >>> [s.tolist() for s in rg.nn.utils.rnn.unpad_sequence(x, rg.tensor([2, 1]), batch_first=True)]
    [[1.0, 2.0], [3.0]]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = np.asarray(lengths._data if isinstance(lengths, Tensor) else lengths).astype(np.int64).reshape(-1)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(lens)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of shape ``(L_i, *)`` (longest first unless ``enforce_sorted`` is
    False). See ``PackedSequence`` for an example."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a ``PackedSequence`` holds, in their original order.

    >>> import retrograd as rg
    >>> p = rg.nn.utils.rnn.pack_sequence([rg.tensor([1.]), rg.tensor([2., 3.])], enforce_sorted=False)
    >>> [s.tolist() for s in rg.nn.utils.rnn.unpack_sequence(p)]
    [[1.0], [2.0, 3.0]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
