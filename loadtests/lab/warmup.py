"""The warm-up rules: before the first measured phase of a scenario the same load runs unmeasured
(the JIT compiles), its last seconds on new connections, and which scenarios a phase warms."""

from __future__ import annotations

from dataclasses import replace

from .load import LoadSpec
from .runrecord import Run


def warmed_by(scenario: str, warm: set[str]) -> set[str]:
    """The scenarios whose code paths are compiled once this one has run: the fill sends PUTs at
    full speed, and mixed runs what put and get do."""
    done = {scenario} | ({"put"} if scenario == "fill" else set())
    return done | ({"mixed"} if {"put", "get"} <= warm | done else set())


def warm_up(run: Run, spec: LoadSpec, label: str) -> None:
    """The same load, unmeasured, for warmup_s, before the first phase of a scenario: at a few
    hundred requests/s a node's methods reach the JIT's compile thresholds only after tens of
    seconds (three JVMs on two cores measured about a minute for GET), and a phase that began
    cold would measure the compiler, not the store. Its last seconds run on new connections."""
    again = reconnect_s(run.cfg.warmup_s)
    if run.cfg.warmup_s > 0:
        run.phase(replace(spec, duration_s=run.cfg.warmup_s - again), f"warm-up {label}", [], warmup=True)
    reconnect(run, spec, label)


def reconnect(run: Run, spec: LoadSpec, label: str) -> None:
    """The load, unmeasured, for a few seconds on new connections after the nodes were warmed on
    others. The first connections a node accepts after the JIT compiled its steady state make it
    throw away about a hundred compiled methods of the channel pipeline and compile them again over
    seconds (later reconnections only a few), so a measured phase must not be the first."""
    again = reconnect_s(run.cfg.warmup_s)
    if again:
        run.phase(replace(spec, duration_s=again), f"warm-up {label} on new connections", [], warmup=True)


def reconnect_s(warmup_s: int) -> int:
    """The last part of a warm-up that runs on new connections: 10 s, at most half of it."""
    return min(10, warmup_s // 2)
