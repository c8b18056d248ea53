#!/usr/bin/env python3
"""A small DistributedDataParallel training job (gloo, CPU) for the tests of `dltune run --nproc N`
and of profile's ranks: it joins the group with init_process_group("gloo") from the environment
(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, as torchrun sets them), trains a small model on
synthetic data through a DataLoader with a DistributedSampler, and writes one JSON line per rank
to --report DIR/rank-N.json: where it ran (affinity, cgroup, thread counts, environment) and the
steps it made.

  ddp_train.py [--steps N] [--seconds S] [--workers W] [--decode N] [--fail-rank R --fail-after K]
               [--extra-work R:F] [--report DIR]

--fail-rank R makes rank R exit with status 3 after K steps (the others then wait in the
all-reduce, as ranks of a real job do when one dies). --extra-work R:F gives rank R F times the
work of the others per step, without saying so: a straggler. --decode N gives each sample N passes
of elementwise "decoding" work in the DataLoader (with --workers W, in the workers): an input-bound
job when it costs more than the step.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Synthetic(Dataset):
    def __init__(self, n, dim, decode=0):
        self.n, self.dim, self.decode = n, dim, decode

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(self.dim, generator=g)
        y = (x.sum() > 0).long()
        for _ in range(self.decode):
            x = (x * 1.0001).clamp(-4, 4)
        return x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--seconds", type=float, default=0)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--decode", type=int, default=0)
    p.add_argument("--fail-rank", type=int, default=-1)
    p.add_argument("--fail-after", type=int, default=3)
    p.add_argument("--extra-work", default="")
    p.add_argument("--report", default="")
    a = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    extra_rank, extra = -1, 1
    if a.extra_work:
        r, f = a.extra_work.split(":")
        extra_rank, extra = int(r), int(f)

    model = DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(a.dim, 512), torch.nn.ReLU(), torch.nn.Linear(512, 2)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = Synthetic(1 << 20, a.dim, a.decode)
    loader = DataLoader(data, batch_size=64, sampler=DistributedSampler(data, world, rank),
                        num_workers=a.workers)
    side = torch.randn(512, 512)
    started = time.monotonic()
    steps = 0
    for x, y in loader:
        if rank == extra_rank:
            for _ in range(extra * 4):  # the straggler's own work, outside the model
                side = torch.tanh(side @ side) * 0.5
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()  # the gradients' all-reduce: every rank waits for the slowest
        opt.step()
        steps += 1
        if rank == a.fail_rank and steps >= a.fail_after:
            print(f"rank {rank}: failing on purpose after {steps} steps", file=sys.stderr, flush=True)
            os._exit(3)
        if a.seconds > 0:
            if time.monotonic() - started >= a.seconds:
                break
        elif steps >= a.steps:
            break
    # Every rank makes the same number of steps: agree on the end.
    done = torch.tensor([steps])
    dist.all_reduce(done, op=dist.ReduceOp.MIN)
    if a.report:
        with open(os.path.join(a.report, f"rank-{rank}.json"), "w") as f:
            json.dump({
                "rank": rank, "world": world, "steps": steps,
                "local_rank": int(os.environ.get("LOCAL_RANK", "-1")),
                "local_world_size": int(os.environ.get("LOCAL_WORLD_SIZE", "-1")),
                "master_addr": os.environ.get("MASTER_ADDR"),
                "master_port": os.environ.get("MASTER_PORT"),
                "cpus": sorted(os.sched_getaffinity(0)),
                "torch_threads": torch.get_num_threads(),
                "omp": os.environ.get("OMP_NUM_THREADS"),
                "cgroup": open("/proc/self/cgroup").read().splitlines(),
                "seconds": time.monotonic() - started,
            }, f)
    if rank == 0:
        print(f"trained {steps} steps on {world} ranks", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
