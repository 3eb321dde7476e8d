"""A node's Prometheus page (/actuator/prometheus on its management port): read, parsed into
series, and summed by metric name and labels. Python's standard library only.

A parsed page is a dict from each series as the page writes it, the metric name followed by its
labels in braces when it has any (`jvm_gc_pause_seconds_sum{action="end of minor GC",...}`), to
its value. That is what an executor's node_metrics() returns per node (lab.nodeseries).
"""

from __future__ import annotations

import concurrent.futures
import http.client
import math
import urllib.error
import urllib.request

PAGE_PATH = "/actuator/prometheus"


def parse(text: str) -> dict[str, float]:
    """Every sample line of a Prometheus text page, by series; comments and unreadable lines are skipped."""
    page: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        brace = line.find("{")
        if brace >= 0:
            close = line.rfind("}")
            if close < brace:
                continue
            series, rest = line[: close + 1], line[close + 1 :]
        else:
            series, _, rest = line.partition(" ")
        fields = rest.split()
        if not fields:
            continue
        try:
            page[series] = float(fields[0])
        except ValueError:
            continue
    return page


def labels(series: str) -> tuple[str, dict[str, str]]:
    """A series' metric name and labels: 'a{x="1",y="b,c"}' -> ('a', {'x': '1', 'y': 'b,c'})."""
    name, brace, inside = series.partition("{")
    if not brace:
        return name, {}
    inside = inside[: inside.rfind("}")]
    found: dict[str, str] = {}
    i = 0
    while i < len(inside):
        eq = inside.find("=", i)
        if eq < 0:
            break
        key = inside[i:eq].strip().lstrip(",").strip()
        j = eq + 2  # past ="
        value = []
        while j < len(inside) and inside[j] != '"':
            if inside[j] == "\\" and j + 1 < len(inside):
                j += 1
                value.append({"n": "\n"}.get(inside[j], inside[j]))
            else:
                value.append(inside[j])
            j += 1
        found[key] = "".join(value)
        i = j + 1
    return name, found


def total(page: dict[str, float], name: str, **want: str) -> float | None:
    """The sum of a metric's series whose labels include want; None when the page has none."""
    values = []
    for series, value in page.items():
        if not series.startswith(name) or series[len(name) : len(name) + 1] not in ("", "{"):
            continue
        if want:
            _, have = labels(series)
            if any(have.get(k) != v for k, v in want.items()):
                continue
        values.append(value)
    return math.fsum(values) if values else None


def fetch(management: str, timeout: float) -> dict[str, float] | str:
    """A node's parsed page, or why it could not be read (a node that does not answer in timeout s)."""
    url = f"{management.rstrip('/')}{PAGE_PATH}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return parse(response.read().decode(errors="replace"))
    except (OSError, urllib.error.URLError, http.client.HTTPException, ValueError) as e:
        return f"{url}: {getattr(e, 'reason', e) or type(e).__name__}"


def fetch_all(nodes: dict[str, str], timeout: float) -> dict[str, dict[str, float] | str]:
    """Every node's parsed page (nodes: name -> management URL), read at the same time, so a node
    that does not answer delays the others by timeout at most."""
    if not nodes:
        return {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(nodes), thread_name_prefix="scrape") as pool:
        futures = {name: pool.submit(fetch, url, timeout) for name, url in nodes.items()}
        return {name: f.result() for name, f in futures.items()}
