#!/usr/bin/env python3
"""A CPU training job with knobs that drive it into each bottleneck, for `dltune profile`'s tests.

A small CNN trained with SGD on samples that a DataLoader's workers make:
  --decode N     per-sample "decoding" cost in the worker (N passes of elementwise work)
  --data DIR     each sample also reads one file of DIR (made by --make-data), as an image
                 dataset would; with the page cache dropped and reads throttled, this waits on I/O
  --channels C, --layers L, --image P   the model's cost per step (the compute side)
  --hold-mb M    the main process keeps M MiB of touched memory and touches --touch-mb of it
                 each step, in turn (pressure, swap-ins, under a memory limit)
  --seconds S    train for S seconds (after the first step), then print one JSON line and exit
The job prints tqdm progress on stderr, like a real training script.

  train_profile.py --make-data DIR --files N --file-kb K   writes the dataset and exits
"""
import argparse
import json
import os
import sys
import time


def make_data(directory, files, file_kb):
    os.makedirs(directory, exist_ok=True)
    block = os.urandom(file_kb * 1024)
    for i in range(files):
        path = os.path.join(directory, f"{i:06d}.bin")
        with open(path, "wb") as f:
            f.write(block[i % 997:] + block[:i % 997])
    print(json.dumps({"files": files, "bytes": files * file_kb * 1024}), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--decode", type=int, default=0)
    p.add_argument("--data", default="")
    p.add_argument("--channels", type=int, default=16)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--image", type=int, default=32)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--hold-mb", type=int, default=0)
    p.add_argument("--touch-mb", type=int, default=16)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--make-data", default="")
    p.add_argument("--files", type=int, default=2000)
    p.add_argument("--file-kb", type=int, default=64)
    a = p.parse_args()
    if a.make_data:
        make_data(a.make_data, a.files, a.file_kb)
        return

    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, Dataset
    from tqdm import tqdm

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    files = sorted(os.listdir(a.data)) if a.data else []

    class Samples(Dataset):
        def __len__(self):
            return 10 ** 7

        def __getitem__(self, i):
            if files:  # read one whole file, as an image loader does, and derive the sample
                with open(os.path.join(a.data, files[i % len(files)]), "rb") as f:
                    raw = f.read()
                x = torch.frombuffer(bytearray(raw[:3 * a.image * a.image]), dtype=torch.uint8)
                x = x.float().reshape(3, a.image, a.image) / 255.0
            else:
                g = torch.Generator().manual_seed(i)
                x = torch.rand(3, a.image, a.image, generator=g)
            for _ in range(a.decode):
                x = (x * 1.0001).clamp(0, 1)
            return x, i % 10

    torch.manual_seed(0)
    layers = [nn.Conv2d(3, a.channels, 3, padding=1), nn.ReLU()]
    for _ in range(a.layers - 1):
        layers += [nn.Conv2d(a.channels, a.channels, 3, padding=1), nn.ReLU()]
    layers += [nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(a.channels * 16, 10)]
    model = nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    held = None
    if a.hold_mb > 0:
        held = bytearray(a.hold_mb * 1024 * 1024)
        for off in range(0, len(held), 4096):
            held[off] = 1
    # A random order, as a shuffling sampler gives: a file dataset is then read at random.
    loader = DataLoader(Samples(), batch_size=a.batch, num_workers=a.workers,
                        sampler=torch.utils.data.RandomSampler(range(len(files) or 10 ** 6)))
    steps, start, done = 0, None, False
    progress = tqdm(file=sys.stderr, mininterval=0.5)
    while not done:  # epochs until --seconds have passed
        for x, y in loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            steps += 1
            progress.update(1)
            if start is None:
                start = time.monotonic()
            elif time.monotonic() - start >= a.seconds:
                done = True
                break
            if held is not None:  # keep the held memory in use: a slice each step, in turn
                chunk = min(len(held), a.touch_mb * 1024 * 1024)
                off = (steps * chunk) % len(held)
                end = min(off + chunk, len(held))
                held[off:end:4096] = bytes(len(range(off, end, 4096)))
    progress.close()
    elapsed = time.monotonic() - start if start else 0
    print(json.dumps({"steps": steps, "seconds": elapsed,
                      "steps_per_second": steps / elapsed if elapsed > 0 else None}), flush=True)


if __name__ == "__main__":
    main()
