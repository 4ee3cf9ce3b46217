"""DDP communication hooks (``DistributedDataParallel.register_comm_hook``): ``default_hooks``."""
