#!/usr/bin/env python3
# The golden values of tests/unit/test_reference_model.cpp NadamwStepsAsPyTorchsNadam: three
# steps of torch.optim.NAdam(decoupled_weight_decay=True) in float64 on a 3 x 4 matrix.
#   python3 tests/scripts/nadamw_torch_golden.py   (needs torch >= 2.1)
import torch
torch.set_default_dtype(torch.float64)  # the step and mu_product scalars too (else float32)
w = torch.tensor([[0.3, -0.2, 0.5, 0.1], [0.0, 0.4, -0.6, 0.2], [0.25, -0.15, 0.05, -0.35]], dtype=torch.float64, requires_grad=True)
grads = [
  torch.tensor([[0.02, -0.01, 0.03, 0.0], [0.05, 0.01, -0.02, 0.04], [-0.03, 0.02, 0.01, -0.01]], dtype=torch.float64),
  torch.tensor([[-0.01, 0.02, 0.01, 0.03], [0.02, -0.04, 0.01, 0.0], [0.01, 0.01, -0.02, 0.02]], dtype=torch.float64),
  torch.tensor([[0.03, 0.01, -0.02, 0.01], [-0.01, 0.02, 0.03, -0.02], [0.0, -0.01, 0.02, 0.04]], dtype=torch.float64),
]
opt = torch.optim.NAdam([w], lr=0.01, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1, momentum_decay=4e-3, decoupled_weight_decay=True)
for g in grads:
  w.grad = g.clone(); opt.step()
print(torch.__version__)
print(", ".join(repr(x) for x in w.detach().flatten().tolist()))
