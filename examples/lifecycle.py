"""The four beats of a graph's life, drawn: a two-layer MLP's graph built, freed by backward,
failing a second backward, and rebuilt by a new forward while the parameters keep their .grad.

Run: python examples/lifecycle.py [output.png] [--retain]
(needs the graphviz Python package and the Graphviz binaries; writes docs/images/lifecycle.png)
"""

import sys

import retrograd as torch
from retrograd.viz import capture_lifecycle, make_dot_lifecycle

torch.manual_seed(0)
x = torch.randn(4, 3)  # a batch of 4 inputs: no grad needed, so the graph has no node for it
W1 = torch.randn(3, 5, requires_grad=True)
b1 = torch.zeros(5, requires_grad=True)
W2 = torch.randn(5, 1, requires_grad=True)
params = {"W1": W1, "b1": b1, "W2": W2}


def forward():
    h = (x @ W1 + b1).relu()
    return (h @ W2).pow(2).mean()


retain = "--retain" in sys.argv
args = [a for a in sys.argv[1:] if not a.startswith("--")]
out = args[0] if args else "docs/images/lifecycle.png"

# The same four beats as data, for the record:
for beat in capture_lifecycle(forward, params=params, retain_graph=retain):
    print(beat.title)
    if beat.error:
        print("   ", beat.error.split(".")[0] + ".")
for p in params.values():  # capture_lifecycle ran the passes for real: start the drawing from zero
    p.grad = None

dot = make_dot_lifecycle(forward, params=params, retain_graph=retain)
dot.graph_attr.pop("size", None)  # the natural size: every label readable
stem = out[:-4] if out.endswith(".png") else out
path = dot.render(stem, format="png", cleanup=True)
try:  # a palette image is a third of the size (Pillow comes with matplotlib)
    from PIL import Image

    Image.open(path).convert("RGB").quantize(colors=64).save(path, optimize=True)
except ImportError:
    pass
print("wrote", path)
