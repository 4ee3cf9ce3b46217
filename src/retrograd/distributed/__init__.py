"""``retrograd.distributed``: PyTorch's ``torch.distributed`` over MPI (mpi4py).

Launch N processes with ``mpiexec -n N python train.py`` (or ``python -m retrograd.distributed.run
-n N train.py``); each calls ``init_process_group("mpi")``. Needs the ``distributed`` extra
(``pip install "retrograd[distributed]"``: mpi4py and the MPICH library with its ``mpiexec``).
Collectives are not differentiable, as in PyTorch's default API. See docs/distributed.md.
"""

from . import _c10d
from ._c10d import *  # noqa: F403  (the public names, listed once in _c10d.__all__)
from ._c10d import _make_nccl_premul_sum  # noqa: F401  (PyTorch's private name, public in use)
from ._grad_bucket import GradBucket

__all__ = [*_c10d.__all__, "GradBucket"]
