"""``retrograd.amp``: automatic mixed precision on the CPU (``autocast``), as ``torch.amp``.

>>> import retrograd as rg
>>> with rg.amp.autocast("cpu"):
...     rg.nn.functional.linear(rg.ones(1, 2), rg.ones(3, 2)).dtype
torch.bfloat16
"""

from __future__ import annotations

from .autocast_mode import autocast, get_autocast_dtype, is_autocast_available, set_autocast_dtype
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "get_autocast_dtype", "is_autocast_available", "set_autocast_dtype"]
