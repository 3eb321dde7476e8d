"""How the cluster heals, phase by phase: the nodes' healing counters (hints, repair, handoff) read
from their Prometheus metrics before and after each phase, and the difference kept in run.json;
and, after a phase that froze a node (outage), the wait until the cluster has healed: the hints
replayed and a repair round between every two nodes. Python's standard library only.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from urllib.parse import urlparse

from . import promtext

# A phase's figures: the counter (and its label) each comes from, summed over the node's series.
COUNTERS = {
    "hints_written": ("kvlab_hints_written_total", None),
    "hints_replayed": ("kvlab_hints_replayed_total", None),
    "hints_dropped": ("kvlab_hints_dropped_total", None),
    "repair_rounds": ("kvlab_repair_rounds_total", ("outcome", "complete")),
    "repair_rounds_failed": ("kvlab_repair_rounds_total", ("outcome", "failed")),
    "keys_compared": ("kvlab_repair_keys_compared_total", None),
    "repair_sent": ("kvlab_repair_records_total", ("direction", "sent")),
    "repair_received": ("kvlab_repair_records_total", ("direction", "received")),
    "records_moved": ("kvlab_handoff_records_moved_total", None),
    "previous_owner_reads": ("kvlab_handoff_previous_owner_reads_total", None),
    "tombstones_purged": ("kvlab_tombstones_purged_total", None),
}
# Values at the end of the phase, not differences.
GAUGES = {"hints_pending": "kvlab_hints_pending", "leaving": "kvlab_handoff_leaving", "topology_nodes": "kvlab_cluster_nodes"}
FIELDS = (*COUNTERS, *GAUGES)
MANAGEMENT_OFFSET = 1000  # a node's management port: its client port + 1000 unless set otherwise


def management_url(target: str) -> str:
    """A local node's management URL from its client URL: the port + 1000, the node's default."""
    u = urlparse(target)
    port = u.port or (443 if u.scheme == "https" else 80)
    return f"{u.scheme}://{u.hostname}:{port + MANAGEMENT_OFFSET}"


def parse(text: str) -> dict[str, float]:
    """The healing figures in a Prometheus text page (the nodes' /actuator/prometheus)."""
    return figures(promtext.parse(text))


def figures(page: dict[str, float]) -> dict[str, float]:
    """The healing figures of a parsed page (lab.promtext.parse): each counter summed over the
    series of its label, each gauge over all of its series; a figure the page lacks is left out."""
    out: dict[str, float] = {}
    for key, (name, label) in COUNTERS.items():
        value = promtext.total(page, name, **(dict([label]) if label else {}))
        if value is not None:
            out[key] = value
    for key, name in GAUGES.items():
        value = promtext.total(page, name)
        if value is not None:
            out[key] = value
    return out


def fetch(url: str, timeout: float = 3.0, data: bytes | None = None, token: bytes | None = None) -> bytes:
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if token:
        # A state-changing call on the management port needs the cluster secret (or admin token).
        headers["Authorization"] = "Bearer " + token.decode()
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


def scrape(management: str, timeout: float = 3.0) -> dict[str, float] | str:
    """A node's healing figures, or why they could not be read."""
    try:
        return parse(fetch(f"{management}/actuator/prometheus", timeout).decode(errors="replace"))
    except (OSError, urllib.error.URLError, ValueError) as e:
        return f"{management}/actuator/prometheus: {getattr(e, 'reason', e)}"


def sample(nodes: dict[str, str], timeout: float = 3.0) -> dict[str, dict | str]:
    """Every node's figures by name; nodes: name -> management URL."""
    return {name: scrape(url, timeout) for name, url in nodes.items()}


def delta(before: dict[str, dict | str], after: dict[str, dict | str]) -> dict:
    """What the phase did: per node the counters' increase (a node restarted meanwhile counts from
    its restart) and the gauges at the end; the nodes' sum in "total"; nodes that could not be read
    in "missing", with why."""
    nodes, missing = {}, {}
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        if not isinstance(a, dict) or not isinstance(b, dict):
            missing[name] = next((x for x in (a, b) if isinstance(x, str)), "not read")
            continue
        row = {}
        for key in COUNTERS:
            if key in a:
                x, y = b.get(key, 0.0), a[key]
                row[key] = y - x if y >= x else y
        for key in GAUGES:
            if key in a:
                row[key] = a[key]
        nodes[name] = row
    total = {key: sum(row.get(key, 0.0) for row in nodes.values()) for key in COUNTERS}
    total["hints_pending"] = sum(row.get("hints_pending", 0.0) for row in nodes.values())
    total["leaving"] = sum(row.get("leaving", 0.0) for row in nodes.values())
    sizes = [row["topology_nodes"] for row in nodes.values() if "topology_nodes" in row]
    total["topology_nodes"] = max(sizes) if sizes else math.nan
    return {"nodes": nodes, "total": total, "missing": missing}


def repaired(d: dict) -> float:
    """Records copied by repair in a phase: sent and received, over every node (each round is
    counted by the node that ran it, so a record is counted once)."""
    t = d.get("total", {})
    return t.get("repair_sent", 0.0) + t.get("repair_received", 0.0)


def anything(d: dict) -> bool:
    """Did the phase need any healing: a hint written or replayed, a record repaired or moved, a
    tombstone purged, a read from previous owners, or hints still pending at its end?"""
    t = d.get("total", {})
    keys = ("hints_written", "hints_replayed", "hints_dropped", "repair_sent", "repair_received", "records_moved",
            "tombstones_purged", "previous_owner_reads", "hints_pending")
    return any(t.get(k, 0) for k in keys)


# -------------------------------------------------------------------------- waiting for the heal


def request_repair(management: str, timeout: float = 3.0, token: bytes | None = None) -> str:
    """Asks the node for a repair round with every peer now, with token (the cluster secret) as its
    credential; "" or why it could not."""
    try:
        fetch(f"{management}/actuator/kvlab/repair", timeout, data=b"{}", token=token)
        return ""
    except (OSError, urllib.error.URLError) as e:
        return f"{management}/actuator/kvlab/repair: {getattr(e, 'reason', e)}"


def status(management: str, timeout: float = 3.0) -> dict | None:
    try:
        return json.loads(fetch(f"{management}/actuator/kvlab", timeout))
    except (OSError, urllib.error.URLError, ValueError):
        return None


def rounds_since(doc: dict | None, since_epoch: float) -> bool:
    """Has the node run a round with each of its peers that began at or after since_epoch and ended?"""
    if not doc:
        return False
    peers = (doc.get("repair") or {}).get("peers") or {}
    for p in peers.values():
        last = p.get("lastRound") or {}
        started = _epoch(last.get("started"))
        if p.get("running") or started is None or started < since_epoch - 0.001:
            return False
    return True


def _epoch(text: str | None) -> float | None:
    if not text:
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def await_healed(
    nodes: dict[str, str],
    timeout_s: float,
    log: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    sampler: Callable[[dict[str, str]], dict] = sample,
    repairer: Callable[[str], str] = request_repair,
    reader: Callable[[str], dict | None] = status,
) -> dict:
    """After a node came back: waits until no node keeps hints (all replayed), then asks every node
    for a repair round with every peer and waits until each has run one, so what the hints did not
    bring is repaired too. Bounded by timeout_s in all. Returns when each step ended (seconds from
    the start) and whether the cluster healed in time."""
    start = clock()
    deadline = start + timeout_s
    out: dict = {"timeout_s": timeout_s, "hints_replayed_s": None, "repaired_s": None, "healed": False, "why": ""}
    pending = math.nan
    while clock() < deadline:
        s = sampler(nodes)
        unread = [n for n, v in s.items() if not isinstance(v, dict)]
        pending = sum(v.get("hints_pending", 0.0) for v in s.values() if isinstance(v, dict))
        if not unread and pending == 0:
            out["hints_replayed_s"] = clock() - start
            break
        sleep(1.0)
    else:
        out["why"] = (
            f"{pending:.0f} hints still pending after {timeout_s:.0f} s"
            if not math.isnan(pending)
            else f"the nodes could not be read for {timeout_s:.0f} s"
        )
        log(f"healing: {out['why']}")
        return out
    log(f"healing: every hint replayed {out['hints_replayed_s']:.1f} s after the load ended; asking for repair rounds")
    asked = wall()
    failures = [why for why in (repairer(url) for url in nodes.values()) if why]
    if failures:
        out["why"] = "; ".join(failures)
        log(f"healing: {out['why']}")
        return out
    while clock() < deadline:
        if all(rounds_since(reader(url), asked) for url in nodes.values()):
            out["repaired_s"] = clock() - start
            out["healed"] = True
            log(f"healing: every node ran a repair round with every peer, {out['repaired_s']:.1f} s after the load ended")
            return out
        sleep(1.0)
    out["why"] = f"not every node ran a repair round with every peer within {timeout_s:.0f} s"
    log(f"healing: {out['why']}")
    return out
