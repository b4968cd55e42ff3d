#!/usr/bin/env python3
# The golden values of tests/unit/test_reference_model.cpp AdafactorStepsAsPyTorchsAdafactor:
# two steps of torch.optim.Adafactor in float64 on a 3 x 4 matrix and a 4-vector.
#   python3 tests/scripts/adafactor_torch_golden.py   (needs torch >= 2.5)
import torch
torch.set_printoptions(precision=17)
w = torch.tensor([[0.3, -0.2, 0.5, 0.1], [0.0, 0.4, -0.6, 0.2], [0.25, -0.15, 0.05, -0.35]], dtype=torch.float64, requires_grad=True)
v = torch.tensor([1.0, 0.9, 1.1, 1.05], dtype=torch.float64, requires_grad=True)
grads = [
  (torch.tensor([[0.02, -0.01, 0.03, 0.0], [0.05, 0.01, -0.02, 0.04], [-0.03, 0.02, 0.01, -0.01]], dtype=torch.float64),
   torch.tensor([0.01, -0.02, 0.0, 0.03], dtype=torch.float64)),
  (torch.tensor([[-0.01, 0.02, 0.01, 0.03], [0.02, -0.04, 0.01, 0.0], [0.01, 0.01, -0.02, 0.02]], dtype=torch.float64),
   torch.tensor([-0.02, 0.01, 0.02, 0.01], dtype=torch.float64)),
]
opt = torch.optim.Adafactor([w, v], lr=0.1, beta2_decay=-0.8, eps=(1e-7, 1e-3), d=1.0, weight_decay=0.1)
for gw, gv in grads:
  w.grad = gw.clone(); v.grad = gv.clone(); opt.step()
print(torch.__version__)
print(", ".join(repr(x) for x in w.detach().flatten().tolist()))
print(", ".join(repr(x) for x in v.detach().flatten().tolist()))
