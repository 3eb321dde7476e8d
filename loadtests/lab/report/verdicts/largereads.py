"""The large-reads benchmark's verdict: does the cluster serve what its memory budget allows under a
burst of large reads? Its figures are run.json's "largereads" (lab.largereads, computed by
lab.largereadsfigures): the goodput against the capacity, the 504s against their share, the small
key's p99, the statuses, and every node alive without running out of memory (data: a node that
dies of a burst loses what it held)."""

from __future__ import annotations

import math

from .. import fmt
from ..fmt import listing
from .rows import Part, row


def mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB" if size >= 1 << 20 else f"{size} bytes"


def title(lr: dict) -> str:
    return (
        f"kvlab large reads: {lr['nodes']} nodes at {lr['java_options']}, {lr['clients']} clients reading "
        f"{mib(lr['value_size'])} at {lr['replicas']} for {lr['duration_s']} s"
    )


def capacity_row(lr: dict) -> dict:
    per_node = " + ".join(str(n) for n in lr["capacity_per_node"])
    own = fmt.listing(sorted({mib(b) for b in lr["own_budget_bytes"]}))
    return row(
        "capacity (reads at once the budgets hold)",
        f"{lr['capacity']} reads ({per_node}): each coordinator's own share {own}, a read at {lr['replicas']} holds "
        f"{lr['from']} records of {mib(lr['record_footprint_bytes'])} on the heap",
        "the figure the goodput is held to",
        None,
        "none",
    )


def goodput_row(lr: dict) -> dict:
    share, cap, t = lr["goodput_share"], lr["capacity"], lr["targets"]["goodput_share"]
    ok = None if fmt.missing(share) else share >= t
    return row(
        "goodput (reads served to a 200 at once, on average)",
        f"{lr['goodput']:.2f} of {cap} ({fmt.pct(share, 0)}); {lr['served']} reads served, "
        f"{lr['served_per_s']:.1f}/s, {lr['served_mib_per_s']:.1f} MiB/s",
        f"≥ {fmt.pct(t, 0)} of the capacity",
        ok,
        "performance",
    )


def statuses_row(lr: dict) -> dict:
    s = lr["statuses"]
    named = {"200": "200", "503": "503", "504": "504", "0": "no answer"}
    shown = [f"{named.get(code, code)}: {fmt.rate(n)}" for code, n in s.items()]
    other = [c for c in s if c not in ("200", "503", "504")]
    return row(
        "statuses of the large reads",
        f"{fmt.rate(lr['reads'])} reads; {', '.join(shown) or 'none'}",
        "200, 503 (no room, refused at once) and 504 only",
        None if not lr["reads"] else not other,
        "performance",
    )


def timed_out_row(lr: dict) -> dict:
    share, t = lr["timed_out_share"], lr["targets"]["max_timed_out_share"]
    return row(
        "504 share (admitted reads that did not complete)",
        f"{fmt.pct(share, 2)} ({lr['timed_out']} of {fmt.rate(lr['reads'])})",
        f"< {fmt.pct(t, 0)}",
        None if fmt.missing(share) else share < t,
        "performance",
    )


def small_row(lr: dict) -> dict:
    p99, t = lr["small_p99_ms"], lr["targets"]["small_p99_ms"]
    s = lr["small_statuses"]
    refused = sum(n for code, n in s.items() if code != "200")
    observed = (
        f"p99 {fmt.ms(p99)} ms, slowest {fmt.ms(lr['small_max_ms'])} ms, of {lr['small_reads']} reads "
        f"({lr['small_rate']}/s); {refused} not served"
    )
    ok = None if fmt.missing(p99) else p99 < t and refused == 0
    return row("small key during the burst", observed, f"p99 < {t:g} ms, every read served", ok, "performance")


def health_row(lr: dict) -> dict:
    bad = []
    for h in lr["health"]:
        why = [w for w, b in (("exited", not h["alive"]), ("not answering", not h["answers"]),
                              ("OutOfMemoryError in its log", h["out_of_memory"])) if b]
        if why:
            bad.append(f"{h['node']}: {', '.join(why)}")
    torn = lr.get("torn", 0)
    if torn:
        bad.append(f"{torn} answers of 200 with a value not as written")
    return row(
        "every node alive, no OutOfMemoryError, every value whole",
        "; ".join(bad) or f"{len(lr['health'])} of {len(lr['health'])} alive and answering after the burst, no OutOfMemoryError in a log",
        "every node, every 200",
        not bad,
        "data",
    )


def build(run: dict) -> Part:
    lr = run.get("largereads")
    question = "Does the cluster serve what its memory budget allows under a large-read overload, and keep serving small keys?"
    if not lr:
        return Part("kvlab large reads", question, "The burst did not run: no figures.", [], [])
    rows = [capacity_row(lr), goodput_row(lr), statuses_row(lr), timed_out_row(lr), small_row(lr), health_row(lr)]
    missed = [r["check"].split(" (")[0] for r in rows if r["status"] == "fail"]
    g = lr["goodput"]
    answer = (
        f"Goodput {g:.2f} of a capacity of {lr['capacity']} reads at once "
        f"({'–' if math.isnan(lr['goodput_share']) else fmt.pct(lr['goodput_share'], 0)}), "
        f"{fmt.pct(lr['timed_out_share'], 2)} 504, small key p99 {fmt.ms(lr['small_p99_ms'])} ms; "
        + (f"missed: {listing(missed)}." if missed else "every target met.")
    )
    notes = [
        "Goodput: the clients' time on reads that answered 200 (whole), over the burst's time (Little's law): "
        "the reads being served at once on average. It overstates a little: a served read's time holds its wait "
        "before admission and its transfer after its room was returned.",
        f"Capacity: per node, its budget (kvlab_memory_limit_bytes) less its peers' share ({lr['replica_share']:g}), "
        f"over {lr['from']} records of {mib(lr['record_footprint_bytes'])} (a record in whole heap regions of "
        f"{mib(lr['region_bytes'])}, {lr['region_source']}), as the node computes it.",
        f"Load average: {lr['load_average_before'][0]:.2f} before the burst, {lr['load_average_after'][0]:.2f} after it.",
    ]
    return Part(title(lr), question, answer, rows, notes)
