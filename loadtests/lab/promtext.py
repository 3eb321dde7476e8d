"""A node's Prometheus page (/actuator/prometheus on its management port): read, parsed into
series (prometheus_client's parser), and summed by metric name and labels.

A parsed page is a dict from each series, the sample's name followed by its labels in braces when
it has any (`jvm_gc_pause_seconds_sum{action="end of minor GC",...}`), to its value. That is what
an executor's node_metrics() returns per node (lab.nodeseries).
"""

from __future__ import annotations

import concurrent.futures
import functools
import http.client
import math
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

PAGE_PATH = "/actuator/prometheus"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def series(name: str, labels: dict[str, str]) -> str:
    """A series as the text format writes it: name{label="value",...}, or the name alone."""
    if not labels:
        return name
    return name + "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items()) + "}"


def _sample(line: str) -> tuple[str, float]:
    """One sample line: its series, named as series() writes it, and its value (a timestamp after
    the value is left out). The series text goes through prometheus_client's parser once and is
    remembered: a page repeats the same series every scrape, only the values change, so the
    sampler that reads every node once a second parses a page in a fraction of a millisecond
    instead of ten (CPU it would take from the nodes it measures). ValueError: no sample."""
    close = line.rfind("}")
    if close >= 0:
        head, rest = line[: close + 1], line[close + 1 :]
    else:
        head, _, rest = line.partition(" ")
    fields = rest.split()
    if not fields:
        raise ValueError(f"no value: {line!r}")
    return _series_key(head.strip()), float(fields[0])


@functools.lru_cache(maxsize=4096)
def _series_key(head: str) -> str:
    name, pairs = _labels(head)
    return series(name, dict(pairs))


def parse(text: str) -> dict[str, float]:
    """Every sample of a Prometheus text page, by series; comments and lines that are no sample
    are left out."""
    page: dict[str, float] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        try:
            key, value = _sample(line)
        except ValueError:
            continue
        page[key] = value
    return page


@functools.lru_cache(maxsize=4096)
def _labels(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    (family,) = text_string_to_metric_families(text + " 0\n")
    (sample,) = family.samples
    return sample.name, tuple(sample.labels.items())


def labels(text: str) -> tuple[str, dict[str, str]]:
    """A series' name and labels: 'a{x="1",y="b,c"}' -> ('a', {'x': '1', 'y': 'b,c'})."""
    name, pairs = _labels(text)
    return name, dict(pairs)


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
