"""Lesson 9: gradient accumulation with clipping.

.grad accumulates: each backward adds into it. That is why a training loop calls zero_grad(), and
also how to train with a batch larger than memory allows: run several small batches' backward,
then take one optimizer step. Clipping the total gradient norm goes between the last backward and
the step.

Run: python examples/autograd/grad_accumulation.py
"""
import retrograd as torch  # swap for: import torch

model = torch.nn.Linear(3, 1)
with torch.no_grad():  # fixed weights, so both libraries print the same numbers
    model.weight.copy_(torch.tensor([[0.5, -0.3, 0.8]]))
    model.bias.fill_(0.1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)

inputs = torch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 2.0], [3.0, 1.0, -1.0], [2.0, 2.0, 2.0]])
targets = torch.tensor([[1.0], [0.0], [2.0], [-1.0]])

# Two .backward() calls without zero_grad add up.
loss = torch.nn.functional.mse_loss(model(inputs), targets)
loss.backward()
once = model.weight.grad.clone()
torch.nn.functional.mse_loss(model(inputs), targets).backward()
print("two backwards, no zero_grad: grad == 2 * once:", torch.allclose(model.weight.grad, 2 * once))
opt.zero_grad()
print("after zero_grad: weight.grad =", model.weight.grad)

# Accumulate over micro-batches of 2: dividing each loss by the number of steps makes the
# accumulated gradient equal the full batch's.
accum_steps = 2
for i, (xb, yb) in enumerate(zip(inputs.split(2), targets.split(2))):
    micro_loss = torch.nn.functional.mse_loss(model(xb), yb) / accum_steps
    micro_loss.backward()
    print(f"micro-batch {i}: loss {micro_loss.item():.4f}, weight.grad {model.weight.grad}")
print("accumulated == full batch:", torch.allclose(model.weight.grad, once, atol=1e-6))

# Clip, then step: clip_grad_norm_ returns the norm before clipping and rescales in place.
total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
print("norm before clipping:", round(total.item(), 4))
norm_after = torch.stack([p.grad.norm() for p in model.parameters()]).norm()
print("norm after clipping:", round(norm_after.item(), 4))
opt.step()
opt.zero_grad()
print("weight after one clipped step:", model.weight.detach())
print("bias after one clipped step:", model.bias.detach())
