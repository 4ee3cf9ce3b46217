"""The layers of ``retrograd.nn``."""

from .activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module

__all__ = [
    "CrossEntropyLoss", "Dropout", "Flatten", "Identity", "L1Loss", "Linear", "LogSoftmax", "MSELoss", "Module",
    "ModuleDict", "ModuleList", "NLLLoss", "ParameterDict", "ParameterList", "ReLU", "Sequential", "Sigmoid",
    "Softmax", "Tanh", "Unflatten",
]
