#!/usr/bin/env python3
"""A small CPU-bound job for `dltune bench`'s tests: fixed work, then its rate as tqdm prints it.

  cpu_rate.py [--work N] [--fail-on K --counter FILE] [--hold S]
    --work N      N loop iterations (about 0.3 s for the default on this VM)
    --fail-on K   with --counter FILE: the K-th time this job runs (counted in FILE) it fails
                  with exit status 3 before its work, as a crashed training run would
    --hold S      sleep S seconds before the work (a job to interrupt)
"""
import argparse
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", type=int, default=8000000)
    p.add_argument("--fail-on", type=int, default=0)
    p.add_argument("--counter", default="")
    p.add_argument("--hold", type=float, default=0)
    a = p.parse_args()
    if a.counter:
        try:
            with open(a.counter) as f:
                n = int(f.read().strip() or "0")
        except FileNotFoundError:
            n = 0
        n += 1
        with open(a.counter, "w") as f:
            f.write(str(n))
        if n == a.fail_on:
            print("cpu_rate.py: failing on purpose (run %d)" % n, file=sys.stderr)
            sys.exit(3)
    time.sleep(a.hold)
    start = time.perf_counter()
    x = 0
    for i in range(a.work):
        x = (x + i * i) % 1000003
    elapsed = time.perf_counter() - start
    # tqdm's format, which `dltune run` reads: "<rate>it/s"
    print("%d/%d [00:00, %.2fit/s]" % (a.work, a.work, a.work / elapsed), file=sys.stderr)


if __name__ == "__main__":
    main()
