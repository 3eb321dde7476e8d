#!/usr/bin/env python3
"""Static checks of the Grafana dashboard the chart ships (k8s/lint.sh runs it; no Grafana needed):

    k8s/dashboard-check.py DASHBOARD.json [OPERATIONS.md]

- it is JSON, with a uid, a title and the datasource, namespace and pod variables;
- panel ids are unique; every panel lies within the 24 columns and overlaps no other;
- every panel but a row has a description, queries the ${datasource} variable, and has targets
  with distinct refIds and an expression each;
- every kvlab_ series is selected by the namespace and pod variables, as every panel does;
- every kvlab_ metric it queries is named in OPERATIONS.md (the metrics table users read).

Which series a node really serves under those names is checked against a running node by the
service's DashboardMetricsTest. Prints one line per problem; exits 1 when there is any.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

SERIES = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}")
HISTOGRAM_PARTS = re.compile(r"_(bucket|count|sum)$")


def problems(dashboard: dict, operations: str | None) -> list[str]:
    found = []
    for key in ("uid", "title"):
        if not dashboard.get(key):
            found.append(f"the dashboard has no {key}")
    variables = {v.get("name") for v in dashboard.get("templating", {}).get("list", [])}
    for name in ("datasource", "namespace", "pod"):
        if name not in variables:
            found.append(f"the dashboard has no ${name} variable")

    panels = dashboard.get("panels", [])
    ids: dict[int, str] = {}
    boxes = []
    metrics: set[str] = set()
    for p in panels:
        title = p.get("title", "?")
        pid = p.get("id")
        if pid in ids:
            found.append(f"panel {title!r} has the id {pid} of {ids[pid]!r}")
        ids[pid] = title
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in ("h", "w", "x", "y")):
            found.append(f"panel {title!r} has no whole gridPos")
            continue
        if g["x"] < 0 or g["w"] < 1 or g["x"] + g["w"] > 24 or g["h"] < 1 or g["y"] < 0:
            found.append(f"panel {title!r} lies outside the 24 columns: {g}")
        for other, og in boxes:
            if g["x"] < og["x"] + og["w"] and og["x"] < g["x"] + g["w"] and g["y"] < og["y"] + og["h"] and og["y"] < g["y"] + g["h"]:
                found.append(f"panel {title!r} overlaps {other!r}")
        boxes.append((title, g))
        if p.get("type") == "row":
            continue
        if not p.get("description"):
            found.append(f"panel {title!r} has no description")
        if (p.get("datasource") or {}).get("uid") != "${datasource}":
            found.append(f"panel {title!r} does not query the ${{datasource}} variable")
        targets = p.get("targets") or []
        if not targets:
            found.append(f"panel {title!r} has no query")
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs) or None in refs:
            found.append(f"panel {title!r} has missing or repeated refIds: {refs}")
        for t in targets:
            expr = t.get("expr", "")
            if not expr.strip():
                found.append(f"panel {title!r} has a target without an expression")
            for name, selector in SERIES.findall(expr):
                if name.startswith("kvlab_"):
                    metrics.add(HISTOGRAM_PARTS.sub("", name))
                    if '$namespace' not in selector or '$pod' not in selector:
                        found.append(f"panel {title!r}: {name} is not selected by $namespace and $pod")

    if operations is not None:
        for name in sorted(metrics):
            if not re.search(rf"`{re.escape(name)}[`{{ ]", operations):
                found.append(f"{name} is on the dashboard but not in the metrics table of docs/operations.md")
    return found


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        dashboard = json.loads(Path(argv[0]).read_text())
    except ValueError as e:
        print(f"{argv[0]} is not JSON: {e}")
        return 1
    operations = Path(argv[1]).read_text() if len(argv) > 1 else None
    found = problems(dashboard, operations)
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
