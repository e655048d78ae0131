#!/usr/bin/env python3
"""Writes a profile of N Poisson flows over two 1 Gbit/s hops for 10 s.

usage: flows_profile.py N > flowsN.yaml

The flows share 80 Mbit/s of 100-byte frames, 1 M frames in all whatever
N, so that only the number of flows changes (issue 21's "the same million
frames over 10 and over 10 000 flows").
"""
import sys

n = int(sys.argv[1])
print(f"name: flows{n}\nseed: 1\nduration: 10s\nhops:\n"
      "  a: {rate: 1Gbit, delay: 1ms}\n  b: {rate: 1Gbit, delay: 1ms}\nflows:")
for i in range(n):
    print(f"  f{i}: {{route: [a, b], traffic: {{poisson: {{rate: {80_000_000 // n}bit, size: 100B}}}}, trace: false}}")
