#!/usr/bin/env python3
"""How a local kvlab cluster is doing, a few lines per node: serving or down, the topology it
reckons by, hints kept for peers, its last repair round with each peer, handoff and leave in
progress, tombstones purged, its part of the last backup (when, how big, how long, where, outcome). `make status` runs it (through scripts/local-cluster.sh status); it
needs nothing but Python 3's standard library.

    cluster-status.py [--timeout S] [--repair | --backup [NAME]] [--token-file FILE] --node NAME URL MANAGEMENT_URL PID [--node ...]

Each node is asked on its client port (/v0/status) whether it serves, and on its management port
for /actuator/kvlab (the cluster as it sees it) and /actuator/prometheus (its hint counters). PID
is the node's process id, or - when unknown. Peers are shown by the names given here. A repair
changes state, so the node takes it only with a credential: --token-file names a file with the
cluster secret or the management admin token, sent as `Authorization: Bearer`; reads need none.
A backup (`make backup`) is asked of the first node that serves, which coordinates the whole cluster's
and answers when it is complete; its last line is `backup <name> in <where>`, as `make restore` takes it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timezone

# Counters of the node's Prometheus metrics that the status shows (since the node started).
COUNTERS = ("kvlab_hints_written_total", "kvlab_hints_replayed_total", "kvlab_hints_dropped_total")


@dataclass
class Node:
    name: str
    url: str
    management: str
    pid: int | None = None
    alive: bool | None = None  # the process runs (None: no pid to look at)
    serving: bool = False
    status: dict | None = None  # /actuator/kvlab
    counters: dict = field(default_factory=dict)
    error: str = ""


def fetch(url: str, timeout: float, data: bytes | None = None, token: str | None = None) -> bytes:
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


def counters(text: str) -> dict[str, float]:
    """The COUNTERS in a Prometheus text page, each summed over its series."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in COUNTERS:
            try:
                found[name] = found.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
            except (IndexError, ValueError):
                continue
    return found


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not reaped yet) is no node.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def probe(node: Node, timeout: float) -> Node:
    if node.pid is not None:
        node.alive = process_alive(node.pid)
        if not node.alive:
            node.error = "its process has exited"
            return node
    try:
        fetch(f"{node.url}/v0/status", timeout)
        node.serving = True
    except (OSError, urllib.error.URLError) as e:
        node.error = f"{node.url}/v0/status: {reason(e)}"
        if timed_out(e):
            return node  # frozen or overloaded: its management port would keep us waiting as long
    try:
        node.status = json.loads(fetch(f"{node.management}/actuator/kvlab", timeout))
        node.counters = counters(fetch(f"{node.management}/actuator/prometheus", timeout).decode(errors="replace"))
    except (OSError, urllib.error.URLError, ValueError) as e:
        node.error = node.error or f"{node.management}/actuator/kvlab: {reason(e)}"
    return node


def timed_out(e: Exception) -> bool:
    return isinstance(e, TimeoutError) or isinstance(getattr(e, "reason", None), TimeoutError)


def reason(e: Exception) -> str:
    if isinstance(e, urllib.error.HTTPError):
        try:  # the node says why in the first line of its answer (a 401: which credential it wants)
            why = e.read(300).decode(errors="replace").strip().splitlines()[0]
        except (OSError, IndexError):
            why = ""
        return f"HTTP {e.code}" + (f": {why}" if why else "")
    if isinstance(e, urllib.error.URLError):
        return str(e.reason)
    return str(e) or type(e).__name__


# ------------------------------------------------------------------------------------- formatting


def parse_time(text: str | None) -> float | None:
    if not text or text == "null":
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 7200:
        return f"{seconds // 60} min ago"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} days ago"


def when(text: str | None, now: float) -> str:
    """An ISO instant as the local time of day and how long ago; 'never' for none."""
    t = parse_time(text)
    if t is None:
        return "never"
    clock = datetime.fromtimestamp(t).strftime("%H:%M:%S" if now - t < 86400 else "%Y-%m-%d %H:%M")
    return f"{clock} ({ago(now - t)})"


def size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def count(n) -> str:
    return f"{int(n):,}".replace(",", " ") if isinstance(n, (int, float)) else "?"


def counted(n, thing: str) -> str:
    """'1 key', '3 keys': a count and its noun, which is the first word of thing."""
    word, _, rest = thing.partition(" ")
    return f"{count(n)} {word if n == 1 else word + 's'}{' ' + rest if rest else ''}"


def short_outcome(outcome: str, limit: int = 70) -> str:
    text = " ".join(str(outcome).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def lines(node: Node, names: dict[str, str], now: float | None = None) -> list[str]:
    """The lines that show one node. names: node URL -> the name to show for it."""
    now = time.time() if now is None else now

    def name(url: str) -> str:
        return names.get(url, url.removeprefix("http://").removeprefix("https://"))

    pid = f"pid {node.pid}" if node.pid is not None else "no pid"
    if node.alive is False:
        return [f"{node.name}  down     {node.url}  {pid} (not running)"]
    s = node.status
    state = "serving" if node.serving else "down"
    head = f"{node.name}  {state:<8} {node.url}  {pid}"
    if s is None:
        return [head, f"    no status: {node.error}"]
    topo = s.get("topology") or {}
    head += f"  topology {len(s.get('nodes', []))} nodes"
    previous = topo.get("previousNodes") or []
    if previous:
        head += f" (changed {when(topo.get('changedAt'), now)}, from {len(previous)})"
    out = [head]
    if not node.serving and node.error:
        out.append(f"    not serving: {node.error}")

    hints = s.get("hints") or {}
    pending = "; ".join(
        f"{count(h.get('pending'))} for {name(peer)} ({size(h.get('bytes', 0))}, oldest {when(h.get('oldest'), now)})"
        for peer, h in sorted(hints.items())
    )
    c = node.counters
    totals = (
        f"; since start {count(c.get('kvlab_hints_written_total', 0))} written, "
        f"{count(c.get('kvlab_hints_replayed_total', 0))} replayed"
        + (f", {count(c['kvlab_hints_dropped_total'])} dropped" if c.get("kvlab_hints_dropped_total") else "")
        if c
        else ""
    )
    out.append(f"    hints    {('pending: ' + pending) if pending else 'none pending'}{totals}")

    repair = s.get("repair") or {}
    peers = repair.get("peers") or {}
    label = "repair  " if repair.get("enabled", True) else "repair (off)"
    if not peers:
        out.append(f"    {label} no peers")
    for i, (peer, p) in enumerate(sorted(peers.items(), key=lambda kv: name(kv[0]))):
        last = p.get("lastRound")
        if p.get("running"):
            text = "running now"
            if last:
                text += f"; before: {round_text(last, now)}"
        elif last:
            text = round_text(last, now)
        else:
            text = "no round yet"
        if last and not last.get("complete") and p.get("lastCompleteRoundStarted"):
            text += f"; last complete one began {when(p.get('lastCompleteRoundStarted'), now)}"
        out.append(f"    {label if i == 0 else ' ' * len(label)} {name(peer)}: {text}")

    handoff = s.get("handoff") or {}
    leaving = handoff.get("leaving")
    if leaving:
        stay = ", ".join(name(n) for n in leaving.get("remaining", []))
        text = f"since {when(leaving.get('started'), now)}, handing its records to {stay}: {leaving.get('passes', 0)} passes"
        if leaving.get("lastPass"):
            text += f", the last {sweep_text(leaving['lastPass'])}"
        out.append(f"    LEAVING  {text}")
    parts = [
        f"{counted(handoff.get('recordsMovedAway', 0), 'record moved away')}, "
        f"{counted(handoff.get('tombstonesPurged', 0), 'tombstone purged')} since start"
    ]
    last = handoff.get("lastSweep")
    if handoff.get("running"):
        parts.append(f"sweep running since {when(handoff['running'].get('started'), now)}: {sweep_text(handoff['running'])}")
    elif leaving:
        pass
    elif not last:
        parts.append("no sweep yet")
    elif any(last.get(k) for k in ("sent", "movedAway", "purged", "failed")):
        parts.append(f"last sweep {when(last.get('started'), now)}: {sweep_text(last)}")
    else:
        parts.append(f"last sweep {when(last.get('started'), now)}: nothing to move")
    joined = "; ".join(parts)
    if len(joined) <= 110:
        out.append(f"    handoff  {joined}")
    else:
        out.extend(f"    {'handoff ' if i == 0 else ' ' * 8} {part}" for i, part in enumerate(parts))
    if "backup" in s:
        out.append(f"    backup   {backup_text(s.get('backup') or {}, now)}")
    return out


def backup_text(b: dict, now: float) -> str:
    """This node's part of its last backup: when, outcome, how big, how long, where; or why there is none."""
    if not b.get("target"):
        return "no target (kvlab.backup.target unset)"
    running = b.get("running")
    last = b.get("last")
    text = ""
    if running:
        text = f"running since {when(running.get('startedAt'), now)}"
        text += f" ({running['backup']})" if running.get("backup") else ""
        text += "; before: " if last else ""
    if not last:
        return text or f"none yet; target {b['target']}"
    ok = last.get("outcome") == "ok"
    text += f"{when(last.get('startedAt'), now)} {last.get('backup', '?')} " + ("ok" if ok else "FAILED")
    if ok:
        text += (
            f": {size(last.get('bytes') or 0)} ({size(last.get('uploadedBytes') or 0)} uploaded), "
            f"{counted(last.get('keys') or 0, 'key')}, took {seconds(last.get('durationMillis'))}"
        )
    elif last.get("error"):
        text += f": {short_outcome(last['error'], 90)}"
    return f"{text}; in {last.get('where') or b['target']}"


def seconds(millis) -> str:
    if not isinstance(millis, (int, float)):
        return "?"
    return f"{millis / 1000:.1f} s" if millis < 120_000 else f"{millis / 60_000:.1f} min"


def round_text(r: dict, now: float) -> str:
    outcome = r.get("outcome", "?")
    text = f"{when(r.get('started'), now)} {'complete' if r.get('complete') else short_outcome(outcome)}"
    figures = (
        f"{counted(r.get('keysCompared', 0), 'key compared')}, {count(r.get('recordsSent', 0))} sent, "
        f"{count(r.get('recordsReceived', 0))} received"
    )
    if r.get("bucketsDiffering"):
        figures = f"{counted(r['bucketsDiffering'], 'bucket differed')}, " + figures
    return f"{text}: {figures}" if r.get("complete") or r.get("keysCompared") else text


def sweep_text(s: dict) -> str:
    text = f"{counted(s.get('scanned', 0), 'record read')}, {count(s.get('sent', 0))} sent"
    if s.get("movedAway"):
        text += f", {count(s['movedAway'])} moved away"
    if s.get("purged"):
        text += f", {count(s['purged'])} tombstones purged"
    if s.get("failed"):
        text += f", {count(s['failed'])} not sent"
    return text


def summary(nodes: list[Node]) -> str:
    serving = sum(1 for n in nodes if n.serving)
    pending = sum(h.get("pending", 0) for n in nodes if n.status for h in (n.status.get("hints") or {}).values())
    sizes = {len(n.status.get("nodes", [])) for n in nodes if n.status}
    text = f"{serving} of {len(nodes)} nodes serving"
    if len(sizes) > 1:
        text += f"; they disagree on the topology ({', '.join(str(s) for s in sorted(sizes))} nodes)"
    text += f"; {count(pending)} hints pending" if pending else "; no hints pending"
    if any(n.status and (n.status.get("handoff") or {}).get("leaving") for n in nodes):
        text += "; a node is leaving"
    return text


# ------------------------------------------------------------------------------------------ main


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--timeout", type=float, default=2.0, help="seconds to wait for each answer")
    p.add_argument("--repair", action="store_true", help="ask every serving node for a repair round with every peer now")
    p.add_argument(
        "--backup",
        nargs="?",
        const="",
        metavar="NAME",
        help="back the whole cluster up now, through the first node that serves (NAME: the backup's; default kvlab-<UTC time>)",
    )
    p.add_argument("--backup-timeout", type=float, default=3600.0, help="seconds a backup may take (its answer comes when it is complete)")
    p.add_argument(
        "--token-file",
        help="a file with the cluster secret or the management admin token, which a repair or a backup needs (make up keeps the secret in data/cluster-secret)",
    )
    p.add_argument(
        "--node", nargs=4, action="append", required=True, metavar=("NAME", "URL", "MANAGEMENT_URL", "PID")
    )
    return p.parse_args(argv)


def nodes_of(args: argparse.Namespace) -> list[Node]:
    return [
        Node(name, url.rstrip("/"), management.rstrip("/"), int(pid) if pid.isdigit() else None)
        for name, url, management, pid in args.node
    ]


def read_token(path: str | None, what: str = "a repair") -> str | None:
    """The credential in the file, surrounding white space stripped; None (with why, on stderr) when there is none."""
    if not path:
        print(f"{what} needs the cluster secret or the management admin token: --token-file FILE", file=sys.stderr)
        return None
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as e:
        print(f"cannot read the token file {path}: {e.strerror or e}", file=sys.stderr)
        return None
    if not token:
        print(f"the token file {path} is empty", file=sys.stderr)
        return None
    return token


def repair(nodes: list[Node], timeout: float, token: str) -> int:
    failed = 0
    for n in nodes:
        if n.pid is not None and not process_alive(n.pid):
            print(f"{n.name}: down, skipped")
            continue
        try:
            fetch(f"{n.management}/actuator/kvlab/repair", timeout, data=b"{}", token=token)
            print(f"{n.name}: a repair round with every peer starts within a second")
        except (OSError, urllib.error.URLError) as e:
            failed += 1
            print(f"{n.name}: {n.management}/actuator/kvlab/repair: {reason(e)}")
    if failed < len(nodes):
        print("watch them with: make status")
    return 1 if failed else 0


def backup(nodes: list[Node], timeout: float, backup_timeout: float, token: str, name: str) -> int:
    """A whole backup, asked of the first node that answers; its figures, then `backup <name> in <where>` last."""
    body = json.dumps({"name": name} if name else {}).encode()
    tried = []
    for n in nodes:
        if n.pid is not None and not process_alive(n.pid):
            tried.append(f"{n.name}: down")
            continue
        try:
            fetch(f"{n.url}/v0/status", timeout)
        except (OSError, urllib.error.URLError) as e:
            tried.append(f"{n.name}: {reason(e)}")
            continue
        print(f"{n.name} coordinates the backup (every node snapshots and uploads its part) ...", flush=True)
        try:
            answer = json.loads(fetch(f"{n.management}/actuator/kvlab/backup", backup_timeout, data=body, token=token))
        except (OSError, urllib.error.URLError, ValueError) as e:
            print(f"the backup failed: {n.management}/actuator/kvlab/backup: {reason(e)}", file=sys.stderr)
            return 1
        print("\n".join(backup_lines(answer, {x.url: x.name for x in nodes})))
        return 0
    print("no node serves, so none can take the backup: " + "; ".join(tried), file=sys.stderr)
    return 1


def backup_lines(answer: dict, names: dict[str, str]) -> list[str]:
    """A complete backup's answer: per node its part, the whole, the guarantee, and `backup <name> in <where>` last."""
    out = []
    for part in answer.get("nodes") or []:
        node = names.get(part.get("node"), part.get("node", f"node {part.get('index', '?')}"))
        out.append(
            f"  {node}: {counted(part.get('keys') or 0, 'key')}, {size(part.get('bytes') or 0)} "
            f"({size(part.get('uploadedBytes') or 0)} uploaded, {count(part.get('files') or 0)} files) "
            f"in {seconds(part.get('durationMillis'))}"
        )
    out.append(
        f"took {seconds(answer.get('durationMillis'))}: {counted(answer.get('keys') or 0, 'key')}, "
        f"{size(answer.get('bytes') or 0)}, of which {size(answer.get('uploadedBytes') or 0)} uploaded (the rest was there already)"
    )
    if answer.get("guarantee"):
        out.append(str(answer["guarantee"]))
    out.append(f"backup {answer.get('backup')} in {answer.get('target')}")
    return out


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    nodes = nodes_of(args)
    if args.repair:
        token = read_token(args.token_file)
        return repair(nodes, args.timeout, token) if token else 2
    if args.backup is not None:
        token = read_token(args.token_file, "a backup")
        return backup(nodes, args.timeout, args.backup_timeout, token, args.backup) if token else 2
    names = {n.url: n.name for n in nodes}
    now = time.time()
    for n in nodes:
        probe(n, args.timeout)
    for n in nodes:
        print("\n".join(lines(n, names, now)))
    print(summary(nodes))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # make status | head
        sys.stderr.close()
        sys.exit(0)
