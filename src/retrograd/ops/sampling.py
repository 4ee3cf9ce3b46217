"""Random samplers as ops: their draws are made outside (``retrograd._sampling``, PyTorch's
stream) and passed in; the ops give the result PyTorch's ``grad_fn`` (``NormalBackward0``...) and
its gradient, zero for every input (a sample does not depend on its parameters' values here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from .op import Op


def _sample(*args: Any) -> np.ndarray:
    return args[-1]  # type: ignore[no-any-return]


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return Tensor._make(np.zeros(shape, like._data.dtype))


def _in_place(name: str, node: str) -> Op:
    """``x.<name>_()``: the samples replace ``x``; its gradient is zero."""
    return Op(name, _sample, node=node, inputs=("self",), params=("sample",),
              grads=(lambda grad, self_shape: _zeros(self_shape, grad),), jvp="transpose")


normal_ = _in_place("normal_", "NormalBackward0")
uniform_ = _in_place("uniform_", "UniformBackward0")
random_ = _in_place("random_", "RandomBackward2")
random_from_to_ = _in_place("random_", "RandomBackward0")
random_to_ = _in_place("random_", "RandomBackward1")
exponential_ = _in_place("exponential_", "ExponentialBackward0")
geometric_ = _in_place("geometric_", "GeometricBackward0")
log_normal_ = _in_place("log_normal_", "LogNormalBackward0")
cauchy_ = _in_place("cauchy_", "CauchyBackward0")
bernoulli_scalar_ = _in_place("bernoulli_", "BernoulliBackward2")

normal_tensor_float = Op("normal", _sample, node="NormalBackward1", inputs=("mean",), params=("sample",),
                         grads=(lambda grad, mean_shape: _zeros(mean_shape, grad),), jvp="transpose")
normal_float_tensor = Op("normal", _sample, node="NormalBackward2", inputs=("std",), params=("sample",),
                         grads=(lambda grad, std_shape: _zeros(std_shape, grad),), jvp="transpose")
normal_tensor_tensor = Op("normal", _sample, node="NormalBackward3", inputs=("mean", "std"), params=("sample",),
                          grads=(lambda grad, mean_shape: _zeros(mean_shape, grad),
                                 lambda grad, std_shape: _zeros(std_shape, grad)), jvp="transpose")
bernoulli_tensor_ = Op("bernoulli_", _sample, node="BernoulliBackward1", inputs=("self", "p"), params=("sample",),
                       grads=(lambda grad, self_shape: _zeros(self_shape, grad),
                              lambda grad, p_shape: _zeros(p_shape, grad)), jvp="transpose")
poisson = Op("poisson", _sample, node="PoissonBackward0", inputs=("self",), params=("sample",),
             grads=(lambda grad, self_shape: _zeros(self_shape, grad),), jvp="transpose")
bernoulli = Op("bernoulli", _sample, node="BernoulliBackward0", inputs=("self",), params=("sample",),
               grads=(lambda grad, self_shape: _zeros(self_shape, grad),), jvp="transpose")
