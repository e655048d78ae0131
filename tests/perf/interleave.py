#!/usr/bin/env python3
"""Runs commands interleaved and reports each one's CPU and wall time.

usage: interleave.py RUNS 'command 1' 'command 2' ...

Each round runs every command once, in turn (so that old and new builds
see the same load); the first round is a warm-up and is not counted. For
each command it prints the median and the range of the CPU time (user +
sys, from getrusage: what waiting on a loaded machine does not inflate) and
of the wall time, and the largest max RSS. Commands run through the shell.
"""
import os
import statistics
import subprocess
import sys
import time


def main():
    runs, cmds = int(sys.argv[1]), sys.argv[2:]
    cpu = {c: [] for c in cmds}
    wall = {c: [] for c in cmds}
    rss = {c: 0 for c in cmds}
    for r in range(runs + 1):
        for c in cmds:
            start = time.perf_counter()
            p = subprocess.Popen(c, shell=True, stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(p.pid, 0)
            elapsed = time.perf_counter() - start
            if status != 0:
                sys.exit(f"{c}: exit status {status}")
            if r > 0:
                cpu[c].append(usage.ru_utime + usage.ru_stime)
                wall[c].append(elapsed)
                rss[c] = max(rss[c], usage.ru_maxrss)
    for c in cmds:
        v, w = [x * 1000 for x in cpu[c]], [x * 1000 for x in wall[c]]
        print(f"cpu {statistics.median(v):8.1f} ms [{min(v):.1f} … {max(v):.1f}]  "
              f"wall {statistics.median(w):8.1f} ms [{min(w):.1f} … {max(w):.1f}]  "
              f"{rss[c] / 1024:.1f} MB  {c}")


main()
