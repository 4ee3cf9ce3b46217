"""Thread-local grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each mode is a context manager and a decorator (with or without parentheses), and each
thread has its own state, as in PyTorch. A decorated generator function runs each step under
the mode, and the caller's mode holds between steps:

>>> import retrograd as rg
>>> @rg.no_grad()
... def steps():
...     yield rg.is_grad_enabled()
>>> [(grad, rg.is_grad_enabled()) for grad in steps()]
[(False, True)]
"""

from __future__ import annotations

import functools
import warnings
from _thread import _local, allocate_lock  # threading's own primitives, without importing threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "no_grad", "set_grad_enabled"]

F = TypeVar("F", bound=Callable[..., Any])


_CO_GENERATOR = 0x20  # code.co_flags bit of a generator function (inspect.CO_GENERATOR)


def _is_generator_function(func: Any) -> bool:
    """``inspect.isgeneratorfunction`` without importing inspect (it costs milliseconds at import)."""
    code = getattr(func, "__code__", None)
    return code is not None and bool(code.co_flags & _CO_GENERATOR)


class _ModeState(_local):
    """Per-thread flags read on every op; attribute defaults are per thread."""

    grad_enabled: bool = True
    inference: bool = False


STATE = _ModeState()

# How many ``inference_mode`` contexts are open, in all threads: while none is, every op can
# skip reading the thread-local ``STATE.inference`` (a thread-local read costs as much as a
# small NumPy op's bookkeeping). Changed under a lock; read without one (it only gates a read).
INFERENCE_CONTEXTS = [0]
_contexts_lock = allocate_lock()


def is_grad_enabled() -> bool:
    """Return whether ops run now record a graph.

    >>> import retrograd as rg
    >>> with rg.no_grad():
    ...     rg.is_grad_enabled()
    False
    """
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Return whether inference mode is active in this thread."""
    return STATE.inference


class _DecoratorContextManager:
    """Base for modes usable as ``with mode():``, ``@mode()`` and bare ``@mode``."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # ``@no_grad`` without parentheses passes the function itself.
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], bool):
            return cls()(args[0])
        return super().__new__(cls)

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()

    def __call__(self, func: F) -> F:
        if isinstance(func, type):
            warnings.warn(CLASS_DECORATION_WARNING, FutureWarning, stacklevel=2)
            cls = func
            func = lambda *args, **kwargs: cls(*args, **kwargs)  # type: ignore[assignment]  # noqa: E731
        if _is_generator_function(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError


CLASS_DECORATION_WARNING = (
    "Decorating classes is deprecated and will be disabled in future versions. You should only "
    "decorate functions or methods. To preserve the current behavior of class decoration, you "
    "can directly decorate the `__init__` method and nothing else."
)


def _wrap_generator(make_mode: Callable[[], Any], func: F) -> F:
    """A generator function whose every step (``next``, ``send``, ``throw``, ``close``) runs
    under a fresh mode, while the caller's mode holds between steps (as in PyTorch)."""

    @functools.wraps(func)
    def generator(*args: Any, **kwargs: Any) -> Any:
        gen = func(*args, **kwargs)
        try:
            with make_mode():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_mode():
                        gen.close()
                    raise
                except BaseException as exc:  # thrown in by the caller: pass it on
                    with make_mode():
                        response = gen.throw(exc)
                else:
                    with make_mode():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return generator  # type: ignore[return-value]


class no_grad(_DecoratorContextManager):
    """Disable graph recording in this thread; results are leaves that do not require grad.

    >>> import retrograd as rg
    >>> x = rg.ones(2, requires_grad=True)
    >>> with rg.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    def __enter__(self) -> None:
        self.prev = STATE.grad_enabled
        STATE.grad_enabled = False

    def __exit__(self, *exc: object) -> None:
        STATE.grad_enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Re-enable graph recording (e.g. inside ``no_grad``).

    >>> import retrograd as rg
    >>> with rg.no_grad(), rg.enable_grad():
    ...     rg.is_grad_enabled()
    True
    """

    def __enter__(self) -> None:
        self.prev = STATE.grad_enabled
        STATE.grad_enabled = True

    def __exit__(self, *exc: object) -> None:
        STATE.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode: as a call it takes effect at once; as a context it is restored on exit.

    >>> import retrograd as rg
    >>> with rg.set_grad_enabled(False):
    ...     rg.is_grad_enabled()
    False
    """

    def __new__(cls, mode: bool) -> set_grad_enabled:
        return object.__new__(cls)

    def __init__(self, mode: bool) -> None:
        if type(mode) is not bool:  # PyTorch's argument parser takes a bool and nothing else
            raise TypeError(
                f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type(mode).__name__}"
            )
        self.prev = STATE.grad_enabled
        self.mode = bool(mode)
        STATE.grad_enabled = self.mode

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)

    def __call__(self, func: F) -> F:
        STATE.grad_enabled = self.prev  # decorating must not change the current mode
        return super().__call__(func)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        STATE.grad_enabled = self.prev


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside are inference tensors that autograd refuses.

    >>> import retrograd as rg
    >>> with rg.inference_mode():
    ...     t = rg.ones(2)
    >>> t.is_inference()
    True
    """

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        with _contexts_lock:
            INFERENCE_CONTEXTS[0] += 1
        self.prev = (STATE.grad_enabled, STATE.inference)
        if self.mode:
            STATE.grad_enabled = False
            STATE.inference = True
        else:  # inference_mode(False) inside inference mode re-enables autograd
            STATE.grad_enabled = True
            STATE.inference = False

    def __exit__(self, *exc: object) -> None:
        STATE.grad_enabled, STATE.inference = self.prev
        with _contexts_lock:
            INFERENCE_CONTEXTS[0] -= 1
