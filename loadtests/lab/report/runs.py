"""Run directories: reading one, finding the previous run to compare with, and saying what differs
between two runs (commit, knobs, machine, executor) so a reader knows what a ratio can mean."""

from __future__ import annotations

import json
from pathlib import Path

from ..results import is_measured


def load_run(run_dir: Path) -> dict:
    doc = json.loads((run_dir / "run.json").read_text())
    env_path = run_dir / "env.json"
    doc["env"] = json.loads(env_path.read_text()) if env_path.exists() else {}
    doc["dir"] = str(run_dir)
    return doc


def previous_run(run_dir: Path, given: Path | None) -> Path | None:
    """The run given, else the newest older run next to this one that a comparison can say
    something about: of the same kind on the same executor (a search is not compared with a fixed
    rate, nor a run in Kubernetes with one on local processes), with a measured phase of the same
    name; one of the same name first (the same experiment). None when no run qualifies."""
    if given:
        given = Path(given)
        if given.name == "run.json":
            given = given.parent
        if not (given / "run.json").exists():
            raise SystemExit(f"no run.json in {given} to compare with")
        return given
    run_dir = run_dir.resolve()
    this = json.loads((run_dir / "run.json").read_text())
    phases = measured_labels(this)
    comparable = []
    for d in sorted(run_dir.parent.iterdir()):
        if not (d.is_dir() and d != run_dir and d.name < run_dir.name and (d / "run.json").exists()):
            continue
        try:
            doc = json.loads((d / "run.json").read_text())
        except (OSError, ValueError):
            continue
        if (
            doc.get("kind") == this.get("kind")
            and doc.get("executor", "local") == this.get("executor", "local")
            and phases & measured_labels(doc)
        ):
            comparable.append((d, doc))
    same_name = [d for d, doc in comparable if doc.get("name") == this.get("name")]
    return (same_name or [d for d, _ in comparable] or [None])[-1]


def measured_labels(run: dict) -> set[str]:
    """The labels of the run's measured phases: what a comparison matches."""
    return {p["label"] for p in run.get("phases", []) if is_measured(p)}


def next_to(run_dir: Path, other: Path | None) -> bool:
    """Whether the other run lies in the same folder as this one: a report links only files that
    are published with it."""
    return bool(other) and Path(other).resolve().parent == Path(run_dir).resolve().parent


def node_count(run: dict) -> int:
    """The kvlab nodes (pods in Kubernetes) the run loaded: those it measured, else its targets."""
    return len(run.get("nodes") or []) or len(run.get("config", {}).get("targets") or []) or 1


def replicas(run: dict) -> str:
    """ack/from of the run's requests: as asked, else the servers' default, a majority of the nodes."""
    asked = run.get("config", {}).get("replicas")
    if asked:
        return asked
    n = node_count(run)
    return f"{n // 2 + 1}/{n}"


def tools_used(run: dict) -> list[str]:
    """The load tools of the measured phases, in order of first use (k6, wrk, wrk2)."""
    used: list[str] = []
    for p in run.get("phases", []):
        tool = p.get("result", {}).get("tool")
        if is_measured(p) and tool and tool not in used:
            used.append(tool)
    return used or [run.get("config", {}).get("tool", "k6")]


# Knobs that name a run or where it wrote, not what it measured.
NOT_KNOBS = {"name", "reports_dir", "compare", "pids", "targets", "run_id"}


def _knobs(config: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in config.items():
        if k in NOT_KNOBS:
            continue
        if isinstance(v, dict):
            out |= _knobs(v, f"{prefix}{k}.")
        else:
            out[prefix + k] = ",".join(map(str, v)) if isinstance(v, list) else v
    return out


def _commit(env: dict) -> str:
    git = env.get("git") or {}
    if not git.get("commit"):
        return "?"
    return f"`{git['commit'][:12]}`"


def differences(run: dict, prev: dict) -> list[str]:
    """What differs between this run and the previous one, in words, one part each: commit,
    knobs, machine, executor; a part says "same" when nothing in it differs."""
    env, old = run.get("env", {}), prev.get("env", {})
    parts = []
    this_commit, prev_commit = _commit(env), _commit(old)
    parts.append(
        f"commit {prev_commit} → {this_commit}" if this_commit != prev_commit else f"same commit {this_commit}"
    )
    knobs, old_knobs = _knobs(run.get("config", {})), _knobs(prev.get("config", {}))
    changed = [
        f"{k} {old_knobs.get(k, '–')} → {knobs.get(k, '–')}"
        for k in sorted(set(knobs) | set(old_knobs))
        if knobs.get(k) != old_knobs.get(k)
    ]
    if node_count(run) != node_count(prev):
        changed.insert(0, f"nodes {node_count(prev)} → {node_count(run)}")
    parts.append("knobs: " + ", ".join(changed) if changed else "same knobs")
    machine = []
    for key, what in (("cpu_model", "CPU"), ("cores", "cores"), ("memory_gib", "GiB memory")):
        if env.get(key) != old.get(key):
            machine.append(f"{what} {old.get(key, '?')} → {env.get(key, '?')}")
    same = "" if machine else f"same machine ({env.get('cores', '?')} cores, {env.get('cpu_model', '?')}), "
    parts.append(
        ("machine: " + ", ".join(machine) + ", " if machine else same)
        + f"load average at start {old.get('load_average', '?')} → {env.get('load_average', '?')}"
    )
    executor, prev_executor = run.get("executor", "local"), prev.get("executor", "local")
    parts.append(
        f"executor {prev_executor} → {executor}" if executor != prev_executor else f"same executor ({executor})"
    )
    return parts
