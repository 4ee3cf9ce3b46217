"""Householder QR in LAPACK's compact form: ``geqrf`` (the reflectors below the diagonal of ``a``,
their scales in ``tau``; no backward, as PyTorch's ``GeqrfBackward0``), ``householder_product``
(``orgqr``: the first columns of ``H_1 ... H_k``) and ``ormqr`` (that product, or its conjugate
transpose, applied to a matrix from either side).

``H_i = I - tau_i v_i v_i^H`` with ``v_i`` the ``i``-th column below the diagonal and a unit ``i``-th
entry. The backward rules walk the reflectors in retrograd ops (``_product_vjp``), so they can be
differentiated again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import scalar_type_name
from ..tensor import Tensor
from .op import Op, apply

householder_product_op: Op
ormqr_op: Op
geqrf_op: Op


def _reflectors(a: np.ndarray, k: int) -> np.ndarray:
    """The reflector vectors ``v_i`` (``*, m, k``): the strict lower part, a unit diagonal."""
    v = np.tril(a[..., :k], -1)
    idx = np.arange(k)
    v[..., idx, idx] = 1
    return v


def _apply_reflectors(v: np.ndarray, tau: np.ndarray, x: np.ndarray, adjoint: bool) -> np.ndarray:
    """``Q x`` (``Q^H x`` when ``adjoint``) for ``Q = H_1 ... H_k``: the reflectors in turn."""
    k = tau.shape[-1]
    order = range(k) if adjoint else reversed(range(k))
    for i in order:
        vi = v[..., :, i:i + 1]
        t = tau[..., i, None, None]
        t = np.conj(t) if adjoint else t
        x = x - t * (vi @ (np.conj(vi).swapaxes(-1, -2) @ x))
    return x


def _householder_product(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    m, n = a.shape[-2], a.shape[-1]
    eye = np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    return _apply_reflectors(_reflectors(a, tau.shape[-1]), tau, eye, False).astype(a.dtype)


def _product_vjp(grad: Tensor, a: Tensor, tau: Tensor, x: Tensor, adjoint: bool,
                 needs_x: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """Gradients of ``Q x`` (``Q^H x``) for ``a``, ``tau`` and ``x``, in retrograd ops: each reflector
    ``y = x' - t v (v^H x')`` is a product of linear maps whose gradients are the adjoints."""
    k = tau.shape[-1]
    m = a.shape[-2]
    mask = Tensor._make(np.tril(np.ones((m, k), a._data.real.dtype), -1))
    unit = Tensor._make(np.eye(m, k, dtype=a._data.real.dtype))
    v = a.narrow(-1, 0, k) * mask + unit
    order = list(range(k)) if adjoint else list(reversed(range(k)))
    steps = []  # the input of each reflector, in application order
    y = x
    for i in order:
        vi = v.narrow(-1, i, 1)
        ti = tau.narrow(-1, i, 1).unsqueeze(-1)
        ti = ti.conj() if adjoint else ti
        steps.append(y)
        y = y - ti * (vi @ (_adjoint(vi) @ y))
    g = grad
    grad_v: list[Any] = [None] * k
    grad_t: list[Any] = [None] * k
    for i, y_in in zip(reversed(order), reversed(steps)):
        vi = v.narrow(-1, i, 1)
        ti = tau.narrow(-1, i, 1).unsqueeze(-1)
        ti = ti.conj() if adjoint else ti
        u = _adjoint(vi) @ y_in  # (1 x cols)
        grad_u = -(ti.conj() * (_adjoint(vi) @ g))
        scaled = -(g @ _adjoint(u))  # the gradient of t v
        gt = _adjoint(vi) @ scaled
        grad_t[i] = gt.conj() if adjoint else gt
        grad_v[i] = ti.conj() * scaled + y_in @ _adjoint(grad_u)
        g = g + vi @ grad_u
    from .shape import cat

    gv = cat(*grad_v, -1)
    gtau = cat(*grad_t, -1).squeeze(-2)
    ga = gv * mask
    if a.shape[-1] > k:
        from .nn import constant_pad_nd

        ga = apply(constant_pad_nd, (ga, (0, a.shape[-1] - k), 0))
    return ga, gtau, (g if needs_x else None)


def _eye_like(a: Tensor) -> Tensor:
    m, n = a.shape[-2], a.shape[-1]
    return Tensor._make(np.broadcast_to(np.eye(m, n, dtype=a._data.dtype), a.shape).copy())


def _householder_grads(grad: Tensor, input: Tensor, tau: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    ga, gtau, _ = _product_vjp(grad, input, tau, _eye_like(input), False, False)
    return ga, gtau


def _check_householder(a: np.ndarray, tau: np.ndarray, name: str) -> None:
    where = f"torch.{name}: "
    if a.ndim < 2:
        raise RuntimeError(where + "input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(where + "input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if a.shape[-1] < tau.shape[-1]:
        raise RuntimeError(where + "input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.shape[:-1] != a.shape[:-2]:
        raise RuntimeError(where + "Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype != a.dtype:
        raise RuntimeError(where + f"tau dtype {scalar_type_name(tau.dtype)} does not match input dtype "
                           f"{scalar_type_name(a.dtype)}")
    if a.dtype.kind not in "fc":
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{scalar_type_name(a.dtype)}'")


def _householder_forward(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    _check_householder(a, tau, "linalg.householder_product")
    return _householder_product(a, tau)


householder_product_op = Op("linalg_householder_product", _householder_forward,
                            node="LinalgHouseholderProductBackward0", inputs=("input", "tau"), dtype="same",
                            grads=lambda grad, input, tau: _householder_grads(grad, input, tau),  # noqa: A006
                            saved=("input", "tau"), jvp="transpose")


def _ormqr_shapes(a: np.ndarray, tau: np.ndarray, c: np.ndarray, left: bool) -> None:
    where = "torch.ormqr: "
    if a.ndim < 2:
        raise RuntimeError(where + "input must have at least 2 dimensions.")
    if c.ndim < 2:
        raise RuntimeError(where + "other must have at least 2 dimensions.")
    left_dim = -2 if left else -1
    if c.shape[left_dim] != a.shape[-2]:
        raise RuntimeError(where + f"other.shape[{left_dim}] must be equal to input.shape[-2]")
    if tau.ndim == 0 or tau.shape[-1] != min(c.shape[left_dim], a.shape[-1]):
        raise RuntimeError(where + f"tau.shape[-1] must be equal to min(other.shape[{left_dim}], input.shape[-1])")
    if tau.shape[:-1] != a.shape[:-2]:
        raise RuntimeError(where + "Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if c.shape[:-2] != a.shape[:-2]:
        raise RuntimeError(where + "Expected batch dimensions of other to be equal to input.shape[:-2], but got "
                           f"{list(c.shape[:-2])}")
    if c.dtype != a.dtype:
        raise RuntimeError(where + "Expected input and other to have the same dtype, but input has dtype"
                           f"{scalar_type_name(a.dtype)} and other has dtype {scalar_type_name(c.dtype)}")
    if tau.dtype != a.dtype:
        raise RuntimeError(where + "Expected input and tau to have the same dtype, but input has dtype"
                           f"{scalar_type_name(a.dtype)} and tau has dtype {scalar_type_name(tau.dtype)}")
    if a.dtype.kind not in "fc":
        raise NotImplementedError(f"\"ormqr_cpu\" not implemented for '{scalar_type_name(a.dtype)}'")


def _ormqr(a: np.ndarray, tau: np.ndarray, c: np.ndarray, left: bool, transpose: bool) -> np.ndarray:
    _ormqr_shapes(a, tau, c, left)
    v = _reflectors(a, tau.shape[-1])
    if left:  # Q c or Q^H c
        return _apply_reflectors(v, tau, c, transpose).astype(c.dtype)
    # c Q = (Q^H c^H)^H; c Q^H = (Q c^H)^H
    ch = np.conj(c).swapaxes(-1, -2)
    return np.conj(_apply_reflectors(v, tau, ch, not transpose)).swapaxes(-1, -2).astype(c.dtype)


def _ormqr_grads(grad: Tensor, self: Tensor, input2: Tensor, input3: Tensor, left: bool, transpose: bool,
                 needs: tuple[bool, ...]) -> tuple[Any, ...]:
    if left:
        return _product_vjp(grad, self, input2, input3, transpose, needs[2])
    # y = c Q (c Q^H) is y^H = Q^H c^H (Q c^H): the left rule on the conjugate transposes
    ga, gtau, gch = _product_vjp(_adjoint(grad), self, input2, _adjoint(input3), not transpose, needs[2])
    return ga, gtau, None if gch is None else _adjoint(gch)


def _adjoint(x: Tensor) -> Tensor:
    return x.mT.conj() if x._data.dtype.kind == "c" else x.mT


ormqr_op = Op("ormqr", _ormqr, node="OrmqrBackward0", inputs=("self", "input2", "input3"),
              params=("left", "transpose"), dtype="same",
              grads=lambda grad, self, input2, input3, left, transpose, needs: _ormqr_grads(
                  grad, self, input2, input3, left, transpose, needs),
              saved=("input2", "input3", "left", "self", "transpose"), jvp="transpose")


def _geqrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if a.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if a.dtype.kind not in "fc":
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{scalar_type_name(a.dtype)}'")
    m, n = a.shape[-2], a.shape[-1]
    if a.size == 0:
        return a.copy(), np.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    return np.ascontiguousarray(h.swapaxes(-1, -2)).astype(a.dtype), tau.astype(a.dtype)


def _geqrf_not_differentiable(grad: Any) -> Any:
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


geqrf_op = Op("geqrf", _geqrf, node="GeqrfBackward0", outputs=2, grads=(_geqrf_not_differentiable,),
              jvp="unsupported")


# -- public forms -------------------------------------------------------------------------------


def householder_product(A: Tensor, tau: Tensor) -> Tensor:  # noqa: N803 - PyTorch's argument names
    """The first ``n`` columns of ``H_1 ... H_k`` for the reflectors stored below the diagonal of
    ``A`` (``m x n``) with scales ``tau`` (``k``): ``torch.linalg.householder_product`` / ``orgqr``.

    >>> import retrograd as torch
    >>> a, tau = torch.geqrf(torch.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> torch.linalg.householder_product(a, tau)
    tensor([[-0.6000, -0.8000],
            [-0.8000,  0.6000]])
    """
    for name, x in (("input", A), ("tau", tau)):
        if not isinstance(x, Tensor):
            raise TypeError(f"linalg_householder_product(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return apply(householder_product_op, (A, tau))  # type: ignore[no-any-return]


def orgqr(input: Tensor, input2: Tensor) -> Tensor:  # noqa: A002
    """``torch.orgqr``: ``linalg.householder_product(input, input2)``.

    >>> import retrograd as torch
    >>> a, tau = torch.geqrf(torch.eye(2))
    >>> torch.orgqr(a, tau).abs()
    tensor([[1., 0.],
            [0., 1.]])
    """
    return householder_product(input, input2)


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,  # noqa: A002
          transpose: bool = False) -> Tensor:
    """``Q @ input3`` for the ``Q`` of ``geqrf``'s ``(input, input2)`` without forming it: ``left``
    picks ``Q`` on the left or the right, ``transpose`` its conjugate transpose.

    >>> import retrograd as torch
    >>> A = torch.tensor([[3.0, 1.0], [4.0, 2.0]])
    >>> a, tau = torch.geqrf(A)
    >>> torch.ormqr(a, tau, torch.eye(2), transpose=True) @ A  # Q^T A = R
    tensor([[-5.0000, -2.2000],
            [ 0.0000,  0.4000]])
    """
    return apply(ormqr_op, (input, input2, input3, bool(left), bool(transpose)))  # type: ignore[no-any-return]


def geqrf(input: Tensor) -> Any:  # noqa: A002
    """LAPACK's compact QR: ``(a, tau)`` with ``R`` on and above the diagonal of ``a`` and the
    Householder reflectors below it (``torch.return_types.geqrf``).

    >>> import retrograd as torch
    >>> torch.geqrf(torch.tensor([[3.0, 1.0], [4.0, 2.0]])).tau
    tensor([1.6000, 0.0000])
    """
    from .return_types import geqrf as result_type

    return result_type(*apply(geqrf_op, (input,)))
