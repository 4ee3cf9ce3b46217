"""``python -m retrograd.demo``: train a digit classifier on scikit-learn's bundled 8×8 digits.

``--model mlp`` or ``cnn``; ``--out DIR`` draws the training curves, per-layer gradient norms
(``retrograd.debug.watch``), the confusion matrix, the misclassified digits and the model's graph
(``retrograd.viz.make_dot``); ``--backend torch`` runs the very same training code under PyTorch
and compares; ``--save``/``--load`` write and evaluate the weights. It uses only retrograd's public
API. Needs the ``demo`` extra: ``pip install retrograd[demo]``.
"""

from .cli import main

__all__ = ["main"]
