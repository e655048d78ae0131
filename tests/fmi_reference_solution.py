#!/usr/bin/env python3
"""An accurate solution of the Van der Pol oscillator, for
tests/fmi_reference_test.go: x0' = x1, x1' = mu*(1 - x0^2)*x1 - x0, from
x0 = 2, x1 = 0, with mu = 1, as the Reference FMUs' VanDerPol has it.

Not part of hilrig: a test helper. It reads the output times, one a line,
on standard input, and writes CSV (time,x0,x1) at those times, integrated
by scipy's DOP853 at relative and absolute tolerances of 1e-13 (some 1e-11
of error over 20 s). Needs python3-scipy.
"""
import sys

from scipy.integrate import solve_ivp


def main():
    times = [float(line) for line in sys.stdin if line.strip()]
    mu = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0

    def f(_, x):
        return [x[1], mu * (1 - x[0] ** 2) * x[1] - x[0]]

    sol = solve_ivp(f, (times[0], times[-1]), [2.0, 0.0], method="DOP853", t_eval=times, rtol=1e-13, atol=1e-13)
    if not sol.success:
        sys.exit("solve_ivp: " + sol.message)
    print("time,x0,x1")
    for t, x0, x1 in zip(sol.t, sol.y[0], sol.y[1]):
        print(f"{t!r},{x0!r},{x1!r}")


if __name__ == "__main__":
    main()
