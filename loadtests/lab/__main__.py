"""kvlab's load lab.

    python -m lab run       --targets URL,... --pids PID,... [--phases fill,put,get,mixed] [--rate N] ...
    python -m lab saturate  --targets URL,... --pids PID,... [--scenario get] [--start-rate N] ...
    python -m lab faults    --targets URL,... --pids PID,... [--faults kill@20+15,pause@70+15,...] ...
    python -m lab soak      --targets URL,... --pids PID,... [--soak-duration 30m] [--soak-rate search|N|RUN_DIR] ...
    python -m lab hotpath   [--tool k6|wrk] [--duration 30] ...
    python -m lab scale     [--sizes 100k,1M,10M] [--rate 10000] [--memory-limit helm|none|2Gi] ...
    python -m lab report    RUN_DIR [--compare OTHER_RUN_DIR]
    python -m lab check     RUN_DIR [--strict]  (does the report have every part, its conclusion agree with its data?)
    python -m lab target-rate RUN_DIR [--share 40]        (SHARE % of a one-node search's rate)
    python -m lab replication-cost --out DIR RUN_DIR ...  (scripts/replication-cost.sh's verdict)

Run it from loadtests/ (or with loadtests/ on PYTHONPATH) with the venv that
loadtests/tools/install.sh makes; mk/lab.mk wraps every command in a make target.
"""

from __future__ import annotations

import signal
import sys

from . import commands


def _terminated(signum, frame):
    # SIGTERM ends a run as Ctrl-C does: load generators and profilers are stopped on the way out.
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGTERM, _terminated)
    return commands.dispatch(commands.parser(__doc__).parse_args(argv))


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt as e:
        print(f"interrupted ({e or 'Ctrl-C'}): load and profilers stopped; what ran so far is in run.json",
              file=sys.stderr)
        sys.exit(130)
