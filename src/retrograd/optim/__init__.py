"""``retrograd.optim``: ``Optimizer``, ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``,
``NAdam``, ``RAdam``, ``Adamax``, ``Adadelta``, ``ASGD``, ``Rprop``, ``Adafactor``, ``LBFGS``,
``Muon`` and ``lr_scheduler``."""

from . import lr_scheduler
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "Muon", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "lr_scheduler"]
