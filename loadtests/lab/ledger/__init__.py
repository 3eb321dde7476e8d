"""The ledger: proof that a phase which breaks something loses no acknowledged write. Beside the
phase's load it writes, overwrites, deletes and reads keys of its own, every operation recorded;
after the cluster healed it reads each key back at each of its replicas and checks the history of
reads. See phase.py (the hook a scenario calls), history.py, check.py (the rules), record.py."""

from .phase import PhaseLedger, companion

__all__ = ["PhaseLedger", "companion"]
