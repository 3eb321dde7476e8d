"""kvlab's load lab: runs k6/wrk phases against nodes, profiles them with async-profiler, and
writes a report. Entry point: python -m lab (see __main__.py)."""
