#!/usr/bin/env python3
"""A small CPU training job for dltune's tests and benchmarks.

A Dataset that builds each sample from its index (standing in for decoding an image), a
DataLoader with worker processes, a small CNN and SGD: the shape of job that
docs/measurements.md measured. Progress goes to stderr through tqdm (its it/s is what
`dltune run` reads); at the end one JSON line on stdout says where and how it ran.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class Synthetic(Dataset):
    def __init__(self, n, work):
        self.n, self.work = n, work

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.rand(3, 32, 32, generator=g)
        for _ in range(self.work):  # the "decoding" cost of one sample
            x = (x * 1.0001).clamp(0, 1)
        return x, i % 10


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=2048)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--work", type=int, default=20)
    p.add_argument("--epochs", type=int, default=1)
    a = p.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(16 * 15 * 15, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(Synthetic(a.samples, a.work), batch_size=a.batch,
                        num_workers=a.workers)
    start = time.monotonic()
    steps = 0
    for _ in range(a.epochs):
        for x, y in tqdm(loader, file=sys.stderr, mininterval=0.1, smoothing=0.3):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            steps += 1
    elapsed = time.monotonic() - start
    with open("/proc/self/status") as f:
        cpus = next(l.split(":")[1].strip() for l in f if l.startswith("Cpus_allowed_list"))
    print(json.dumps({
        "uid": os.getuid(),
        "gid": os.getgid(),
        "home": os.environ.get("HOME"),
        "cpus_allowed": cpus,
        "torch_threads": torch.get_num_threads(),
        "env": {k: os.environ.get(k) for k in (
            "OMP_NUM_THREADS", "MKL_NUM_THREADS", "MALLOC_MMAP_THRESHOLD_",
            "MALLOC_TRIM_THRESHOLD_", "LD_PRELOAD", "CUDA_VISIBLE_DEVICES")},
        "steps": steps,
        "steps_per_second": steps / elapsed if elapsed > 0 else None,
        "samples_per_second": steps * a.batch / elapsed if elapsed > 0 else None,
    }), flush=True)


if __name__ == "__main__":
    main()
