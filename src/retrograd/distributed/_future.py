"""The future of an asynchronous collective (``Work.get_future()``): PyTorch's ``torch.futures.Future``
for what ``retrograd.distributed`` needs: ``wait``, ``value``, ``done``, ``then``, ``set_result``.

A collective progresses inside MPI calls, not in a background thread, so a future completes when
it is waited for (or asked ``done()``): a callback given to ``then`` runs then, once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_UNSET: Any = object()


class Future:
    """A value that will be ready later: ``wait()`` blocks until it is and returns it.

    >>> from retrograd.distributed._future import Future
    >>> fut = Future()
    >>> doubled = fut.then(lambda f: f.value() * 2)
    >>> fut.set_result(21)
    >>> doubled.wait()
    42
    """

    def __init__(self) -> None:
        self._value: Any = _UNSET
        self._error: BaseException | None = None
        self._complete: Callable[[], Any] | None = None  # what makes it done (a Work's wait)
        self._probe: Callable[[], bool] | None = None  # whether that would not block

    @classmethod
    def _of(cls, complete: Callable[[], Any], probe: Callable[[], bool]) -> Future:
        fut = cls()
        fut._complete, fut._probe = complete, probe
        return fut

    def done(self) -> bool:
        """Whether the value (or an error) is there; never blocks."""
        if self._value is _UNSET and self._error is None and self._probe is not None and self._probe():
            self._run()
        return self._value is not _UNSET or self._error is not None

    def _run(self) -> None:
        complete, self._complete, self._probe = self._complete, None, None
        if complete is None:
            return
        try:
            self._value = complete()
        except Exception as e:  # (kept, and raised by every wait/value, as PyTorch's futures do)
            self._error = e

    def wait(self) -> Any:
        """Block until the value is ready and return it (or raise the error that produced it)."""
        if self._value is _UNSET and self._error is None:
            if self._complete is None:
                raise RuntimeError("Future.wait(): nothing will complete this future: call set_result() first")
            self._run()
        return self.value()

    def value(self) -> Any:
        """The value of a completed future (waiting for it if it is not yet)."""
        if self._value is _UNSET and self._error is None:
            return self.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result: Any) -> None:
        """Complete the future with ``result`` (a future made by ``Future()``)."""
        if self._value is not _UNSET or self._error is not None:
            raise RuntimeError("Future can only be marked completed once.")
        self._complete = self._probe = None
        self._value = result

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with an error: ``wait()`` raises it."""
        if self._value is not _UNSET or self._error is not None:
            raise RuntimeError("Future can only be marked completed once.")
        self._complete = self._probe = None
        self._error = result

    def then(self, callback: Callable[[Future], Any]) -> Future:
        """A future of ``callback(self)``, run once this one is done."""
        return Future._of(lambda: callback(_settled(self)), self.done)

    def __repr__(self) -> str:
        return f"Future(done={self.done()})"


def _settled(fut: Future) -> Future:
    """``fut``, done: a callback runs even when it failed (its ``fut.value()`` raises the error)."""
    if fut._value is _UNSET and fut._error is None:
        fut.wait() if fut._complete is None else fut._run()
    return fut
