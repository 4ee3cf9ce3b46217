"""The ``Distribution`` base class (``torch.distributions.Distribution``)."""
from __future__ import annotations

import warnings
from numbers import Number
from typing import Any

import retrograd as rg

from . import constraints
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Distribution"]


class Distribution:
    """Base class of probability distributions.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Normal
    >>> Normal(torch.zeros(2), 1.0).batch_shape
    torch.Size([2])
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Sets whether validation is on by default (it is, as in PyTorch, unless ``python -O``)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (), validate_args: Any = None) -> None:
        self._batch_shape = rg.Size(batch_shape)
        self._event_shape = rg.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    "Please set `arg_constraints = {}` or initialize the distribution "
                    "with `validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # a lazily derived parameter is checked through the one given
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        raise NotImplementedError

    @property
    def batch_shape(self) -> Any:
        return self._batch_shape

    @property
    def event_shape(self) -> Any:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def support(self) -> Any:
        raise NotImplementedError

    @property
    def mean(self) -> Any:
        raise NotImplementedError

    @property
    def mode(self) -> Any:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Any:
        raise NotImplementedError

    @property
    def stddev(self) -> Any:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = ()) -> Any:
        with rg.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        raise NotImplementedError

    def sample_n(self, n: int) -> Any:
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2)
        return self.sample(rg.Size((n,)))

    def log_prob(self, value: Any) -> Any:
        raise NotImplementedError

    def cdf(self, value: Any) -> Any:
        raise NotImplementedError

    def icdf(self, value: Any) -> Any:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Any:
        raise NotImplementedError

    def entropy(self) -> Any:
        raise NotImplementedError

    def perplexity(self) -> Any:
        return rg.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = ()) -> Any:
        if not isinstance(sample_shape, rg.Size):
            sample_shape = rg.Size(sample_shape)
        return rg.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Any) -> None:
        if not rg.is_tensor(value):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = rg.Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                "sample validation. Please initialize the distribution with "
                "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}")

    def _set_parameters(self, validate_args: Any, **given: Any) -> None:
        """The constructor of a distribution with elementwise parameters (``Normal(loc, scale)``,
        ``Gamma``, ``Uniform``, ...): the parameters broadcast against each other and stored, their
        shape the batch shape (``()`` when every one is a number), then ``Distribution.__init__``."""
        values = broadcast_all(*given.values())
        for name, value in zip(given, values):
            setattr(self, name, value)
        scalar = all(isinstance(v, Number) for v in given.values())
        Distribution.__init__(self, () if scalar else values[0].size(), validate_args=validate_args)

    def _expanded(self, cls: Any, batch_shape: Any, _instance: Any, expand: tuple[str, ...] = (),
                  share: tuple[str, ...] = (), event_shape: tuple[int, ...] = ()) -> Any:
        """``expand``'s body for most distributions: a new ``cls`` (or ``_instance``) whose
        parameters named in ``expand`` are expanded to ``batch_shape + event_shape`` (only those set:
        a lazily derived ``probs`` or ``logits`` may not be yet), those in ``share`` carried over,
        and validation as this one's. ``probs``/``logits`` also become ``_param``, as in PyTorch."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = rg.Size(batch_shape)
        shape = tuple(batch_shape) + event_shape
        for name in expand:
            if name in self.__dict__:
                value = self.__dict__[name]
                value = value.expand(shape) if rg.is_tensor(value) else value.expand(batch_shape)
                setattr(new, name, value)
                if name in ("probs", "logits"):
                    new._param = value
        for name in share:
            setattr(new, name, getattr(self, name))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls: Any, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names)
        return self.__class__.__name__ + "(" + args_string + ")"


class BinaryProbsOrLogits:
    """The parameter of Bernoulli, Binomial, NegativeBinomial, Geometric and LogitRelaxedBernoulli:
    a binary event's probability, given as exactly one of ``probs`` or ``logits``; the other is
    derived on first use (a ``lazy_property``, as in PyTorch). A mixin before the base class.

    >>> from retrograd.distributions import Bernoulli
    >>> Bernoulli(logits=0.0).probs
    tensor(0.5000)
    """

    _param: Any

    def _set_probs_or_logits(self, probs: Any, logits: Any, *others: Any) -> tuple[Any, ...]:
        """Store the one given (as itself and as ``_param``) broadcast with ``others``, which
        are returned broadcast."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        *rest, param = broadcast_all(*others, given)
        setattr(self, name, param)
        self._param = param
        return tuple(rest)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()


class LocationScale(Distribution):
    """The ``loc``/``scale`` families (Normal, Laplace, Cauchy): real support, reparameterised
    samples, the constructor, ``expand`` and the mode at ``loc``. A base before the family's own.

    >>> from retrograd.distributions import Laplace
    >>> Laplace(1.0, 2.0).mode
    tensor(1.)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    loc: Any
    scale: Any

    def __init__(self, loc: Any, scale: Any, validate_args: Any = None) -> None:
        self._set_parameters(validate_args, loc=loc, scale=scale)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        return self._expanded(LocationScale, batch_shape, _instance, expand=("loc", "scale"))

    @property
    def mode(self) -> Any:
        return self.loc
