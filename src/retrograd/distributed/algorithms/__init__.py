"""``retrograd.distributed.algorithms``: PyTorch's ``torch.distributed.algorithms`` (the DDP
communication hooks)."""
