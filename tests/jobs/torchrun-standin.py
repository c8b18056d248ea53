#!/usr/bin/env python3
"""A stand-in for torchrun in profile's tests: starts --nproc ranks of a training script as child
processes with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE) and waits for them.

Debian 12's torch 1.13 torchrun does not start under its Python 3.11 (an AttributeError in
torch.distributed.elastic's multiprocessing api), so the tests launch real rank processes this
way: the tree is what torchrun makes (a launcher whose children are the ranks, each with its own
DataLoader workers), and its name has "torchrun" in it, as the real one's command line does.

  torchrun-standin.py --nproc 2 SCRIPT [ARGS...]
"""
import os
import subprocess
import sys


def main():
    args = sys.argv[1:]
    if len(args) < 3 or args[0] != "--nproc":
        sys.exit("usage: torchrun-standin.py --nproc N SCRIPT [ARGS...]")
    n = int(args[1])
    ranks = []
    for r in range(n):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(n))
        ranks.append(subprocess.Popen([sys.executable, "-u"] + args[2:], env=env))
    sys.exit(max(p.wait() for p in ranks))


if __name__ == "__main__":
    main()
