"""The fill's row: whether every key it was to write was stored (answered 201), which every later
phase's reads rely on. A key the fill could not store (it tries each one again a few times) was
never acknowledged: nothing was lost, but the cluster could not take the fill, so the row gates
performance."""

from __future__ import annotations

from .. import fmt
from .rows import row


def asked_and_stored(result: dict) -> tuple[int | None, int | None]:
    """Keys the fill was to write and keys stored: wrk's fill counts both; k6's writes each key of
    its range once, stored when answered 201."""
    if "keys_asked" in result:
        return result["keys_asked"], result.get("keys_stored")
    span = result.get("keys_filled")
    asked = span[1] - span[0] if span else result.get("keys")
    stored = (result.get("status_counts") or {}).get("201")
    return asked, stored


def rows(run: dict) -> list[dict]:
    out = []
    for phase in run.get("phases", []):
        if phase.get("scenario") != "fill":
            continue
        asked, stored = asked_and_stored(phase.get("result", {}))
        if asked is None or stored is None:
            continue
        ok = stored >= asked
        observed = f"{fmt.rate(stored)} of {fmt.rate(asked)} keys stored"
        if not ok:
            observed += f" ({fmt.rate(asked - stored)} PUTs failed)"
        out.append(row(f"{phase['label']}: every key stored", observed, "all of them", ok, "performance"))
    return out
