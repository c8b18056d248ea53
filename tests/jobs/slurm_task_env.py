"""A small PyTorch training job that reports what its task was given: the environment variables
dltune's TaskProlog sets or keeps, torch's intra-op thread count, the CPUs it is bound to, and
that a DataLoader with workers ran. Prints one JSON line (tests/integration/slurm_live_test.cpp).
"""
import json
import os

import torch
from torch.utils.data import DataLoader, TensorDataset

KEYS = ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
        "MALLOC_TOP_PAD_", "LD_PRELOAD", "DLTUNE_WORKERS", "SLURM_PROCID"]


def main():
    workers = int(os.environ.get("DLTUNE_WORKERS", "1") or 1)
    data = TensorDataset(torch.randn(256, 16), torch.randn(256, 1))
    loader = DataLoader(data, batch_size=32, num_workers=workers)
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    steps = 0
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        steps += 1
    print(json.dumps({
        "env": {k: os.environ.get(k) for k in KEYS},
        "torch_threads": torch.get_num_threads(),
        "cpus": sorted(os.sched_getaffinity(0)),
        "steps": steps,
        "workers": workers,
    }), flush=True)


if __name__ == "__main__":
    main()
