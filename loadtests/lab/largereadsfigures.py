"""The large-reads benchmark's figures, from what its clients saw: the capacity the nodes' memory
budgets hold, the goodput, the statuses, the small key's latency. Pure functions of the samples,
so the lab's self-tests hold each to its definition.

The capacity is computed as the node computes its budget (MemoryProperties.budget,
MemoryBudget.footprint): a node's budget (kvlab_memory_limit_bytes) less the share kept for its
peers' requests is what its own requests may hold, and a read at from replicas holds from
records there, each as many whole heap regions as it spans when it is humongous (G1)."""

from __future__ import annotations

import math
from dataclasses import dataclass

# A record's header (storage/Record.HEADER_BYTES) and the largest one, with an expiry (MAX_HEADER_BYTES).
RECORD_HEADER_BYTES = 13
MAX_RECORD_HEADER_BYTES = 21


def footprint(size: int, region_bytes: int) -> int:
    """What an array of size bytes takes of a heap of region_bytes regions: whole regions when it is
    humongous (half a region or more), else its size."""
    if region_bytes <= 0 or size < region_bytes / 2:
        return size
    return -(-size // region_bytes) * region_bytes


def own_share(total: int, replica_share: float, smallest: int) -> int:
    """The bytes of a node's budget its own requests may hold: the rest once the peers' share is kept
    apart; the whole budget when none is (share 0, or too small for two sides)."""
    replicas = max(int(total * replica_share), smallest)
    if replica_share <= 0 or total - replicas < smallest:
        return total
    return total - replicas


@dataclass(frozen=True)
class Capacity:
    """Reads of value_size at from replicas that the coordinators' budgets hold at once."""

    per_node: tuple[int, ...]  # reads each node holds at once as their coordinator
    own_bytes: tuple[int, ...]  # each node's share for its own requests
    record_bytes: int  # one record's footprint on the heap
    from_replicas: int

    @property
    def reads(self) -> int:
        return sum(self.per_node)


def capacity(
    budgets: list[int], value_size: int, from_replicas: int, region_bytes: int, replica_share: float, largest_value: int
) -> Capacity:
    """The capacity of nodes whose budgets (bytes, kvlab_memory_limit_bytes) are given."""
    record = footprint(value_size + RECORD_HEADER_BYTES, region_bytes)
    smallest = footprint(largest_value + MAX_RECORD_HEADER_BYTES, region_bytes)
    own = tuple(own_share(b, replica_share, smallest) for b in budgets)
    return Capacity(tuple(o // (from_replicas * record) for o in own), own, record, from_replicas)


def g1_region_bytes(max_heap: int) -> int:
    """G1's region size for a heap of max_heap bytes when none is set: the power of two nearest
    max_heap / 2048, within 1..32 MiB (what the JVM chooses; read it from the JVM where it can)."""
    mib = 1 << 20
    target = max(max_heap // 2048, mib)
    size = 1 << (target.bit_length() - 1)
    return min(max(size, mib), 32 * mib)


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank percentile (p in 0..100); nan without values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(len(ordered) * p / 100) - 1)]


@dataclass(frozen=True)
class Sample:
    """One read as its client saw it: when it was sent and answered (seconds on one clock), its status
    (0: no answer, the connection failed or the client's timeout passed), and whether a 200's value
    was whole."""

    sent: float
    answered: float
    status: int
    whole: bool = True

    @property
    def seconds(self) -> float:
        return self.answered - self.sent


def counts(samples: list[Sample]) -> dict[str, int]:
    """Samples by status, as strings (JSON's keys); "0" for reads that got no answer."""
    out: dict[str, int] = {}
    for s in samples:
        out[str(s.status)] = out.get(str(s.status), 0) + 1
    return dict(sorted(out.items()))


def goodput(samples: list[Sample], burst_s: float) -> float:
    """Reads being served to a 200 on average over the burst: the clients' time on reads that
    answered 200 (and whole) over the burst's time (Little's law). It overstates a little: a served
    read's time also holds its wait before admission and the transfer after its room was returned."""
    if burst_s <= 0:
        return math.nan
    return sum(s.seconds for s in samples if s.status == 200 and s.whole) / burst_s


def summary(large: list[Sample], small: list[Sample], burst_s: float, cap: Capacity, value_size: int) -> dict:
    """The figures the report and its verdict show."""
    served = [s for s in large if s.status == 200 and s.whole]
    small_ms = [s.seconds * 1000 for s in small]
    small_served = [s.seconds * 1000 for s in small if s.status == 200]
    g = goodput(large, burst_s)
    return {
        "burst_s": burst_s,
        "capacity": cap.reads,
        "capacity_per_node": list(cap.per_node),
        "own_budget_bytes": list(cap.own_bytes),
        "record_footprint_bytes": cap.record_bytes,
        "from": cap.from_replicas,
        "reads": len(large),
        "statuses": counts(large),
        "served": len(served),
        "torn": sum(1 for s in large if s.status == 200 and not s.whole),
        "served_per_s": len(served) / burst_s if burst_s > 0 else math.nan,
        "served_mib_per_s": len(served) * value_size / (1 << 20) / burst_s if burst_s > 0 else math.nan,
        "goodput": g,
        "goodput_share": g / cap.reads if cap.reads else math.nan,
        "timed_out": sum(1 for s in large if s.status == 504),
        "timed_out_share": sum(1 for s in large if s.status == 504) / len(large) if large else math.nan,
        "no_answer": sum(1 for s in large if s.status == 0),
        "small_reads": len(small),
        "small_statuses": counts(small),
        "small_p50_ms": percentile(small_ms, 50),
        "small_p99_ms": percentile(small_ms, 99),
        "small_max_ms": max(small_ms) if small_ms else math.nan,
        "small_served_p99_ms": percentile(small_served, 99),
    }
