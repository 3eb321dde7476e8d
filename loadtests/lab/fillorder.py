"""The order in which the wrk fill (loadtests/wrk2/fill.lua) PUTs its keys, mirrored here so the
lab's tests can check the formula: index i of n goes to key (a*i + c) mod n, a permutation because
gcd(a, n) = 1; thread t of T (0-based, of part p of P wrk processes) takes i = p*T + t, then every
(P*T)-th after it."""

from __future__ import annotations

import math


def order(n: int) -> tuple[int, int]:
    """The permutation's multiplier and offset for n keys, as fill.lua computes them."""
    a = math.floor(n * 0.6180339887) + 1
    while math.gcd(a, n) != 1:
        a += 1
    return a, math.floor(n * 0.3819660113) % n


def keys_of(n: int, thread: int, threads: int, part: int = 0, parts: int = 1) -> list[int]:
    """The key indexes (0-based, before FILL_START) one thread of the fill sends, in order."""
    a, c = order(n)
    return [(a * i + c) % n for i in range(part * threads + thread, n, parts * threads)]
