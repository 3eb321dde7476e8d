"""The disaster scenario's steps on nodes that run as processes on this machine (scripts/local-cluster.sh
started them): a backup asked of a node's management port, every node stopped and its data
directory removed, each directory restored by the service jar (`java -jar kvlab-service.jar
restore`), the nodes started again as they were started, and the ledger's keys read back through
the client API. Each step answers what it did and how long it took."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote, urlparse

from . import faults, healing, tools
from .disaster import held_of, read_count
from .ledger.check import Held
from .ledger.history import seq_in
from .load import log

STOP_TIMEOUT_S = 40.0
READ_TIMEOUT_S = 10.0
READ_TRIES = 3


def option(argv: list[str], name: str) -> str | None:
    """The value of a Spring option --name=value on a command line (the last one wins, as in Spring)."""
    found = None
    for arg in argv:
        if arg.startswith(f"--{name}="):
            found = arg.split("=", 1)[1]
    return found


def jar_of(argv: list[str]) -> str:
    if "-jar" not in argv or argv.index("-jar") + 1 >= len(argv):
        raise RuntimeError(f"the node was not started with -jar: {' '.join(argv[:6])} ...")
    return argv[argv.index("-jar") + 1]


def du(path: Path) -> int:
    """Bytes of the files under path (hard links counted once)."""
    seen, total = set(), 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                st = os.lstat(os.path.join(root, f))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


class LocalDisaster:
    """executor: lab.local.LocalExecutor (its nodes, targets and pid files; restarted() follows a
    node started again); out: where the restore's output goes."""

    def __init__(self, executor, out: Path):
        self.executor = executor
        self.cfg = executor.cfg
        self.out = out
        self.launches = [faults.Launch.of(pid) for pid in self.cfg.pids]
        from .ledger.local import LocalCluster

        self.token = LocalCluster(self.cfg.targets, self.cfg.pids).cluster_secret().decode()

    def data_dir(self, i: int) -> Path:
        launch = self.launches[i]
        d = option(launch.argv, "kvlab.storage.dir") or launch.env.get("KVLAB_STORAGE_DIR")
        if not d:
            raise RuntimeError(f"node n{i} was started without --kvlab.storage.dir")
        return Path(launch.cwd) / d

    def target(self) -> str:
        launch = self.launches[0]
        t = option(launch.argv, "kvlab.backup.target") or launch.env.get("KVLAB_BACKUP_TARGET")
        if not t:
            raise RuntimeError("the nodes were started without a backup target (--kvlab.backup.target)")
        return t

    # ---- the backup

    def backup(self, timeout_s: float) -> dict:
        """A whole backup, asked of node n0: its answer (lab.disaster's record of it), or why it failed."""
        url = f"{healing.management_url(self.cfg.targets[0])}/actuator/kvlab/backup"
        request = urllib.request.Request(
            url, data=b"{}", method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as r:
                return {"answer": json.load(r)}
        except urllib.error.HTTPError as e:
            return {"error": f"HTTP {e.code}: {e.read(500).decode(errors='replace').strip()}"}
        except (OSError, ValueError) as e:
            return {"error": f"{url}: {e}"}

    # ---- the disaster

    def destroy(self) -> dict:
        """Every node stopped (SIGTERM, as make down) and its data directory removed: what was lost."""
        t = time.monotonic()
        for n in self.executor.nodes:
            try:
                os.kill(n.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for n in self.executor.nodes:
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while _running(n.pid):
                if time.monotonic() > deadline:
                    log(f"node {n.name} (pid {n.pid}) did not stop within {STOP_TIMEOUT_S:g} s: killing it")
                    os.kill(n.pid, signal.SIGKILL)
                    deadline = time.monotonic() + 10
                time.sleep(0.1)
        removed = []
        for i in range(len(self.launches)):
            d = self.data_dir(i)
            size = du(d) if d.exists() else 0
            if d.exists():
                shutil.rmtree(d)
            removed.append({"node": f"n{i}", "dir": tools.rel(d), "bytes": size})
        log(f"disaster: every node stopped, {sum(r['bytes'] for r in removed) / 2**20:.1f} MiB of data removed")
        return {"seconds": round(time.monotonic() - t, 3), "removed": removed}

    # ---- the restore

    def restore(self, name: str) -> dict:
        """Each node's data directory restored from the backup, one after the other, as `make restore`
        does: per node its exit code, seconds and bytes restored; the total."""
        n = len(self.launches)
        target = self.target()
        nodes, total = [], 0.0
        for i, launch in enumerate(self.launches):
            d = self.data_dir(i)
            argv = [launch.argv[0], "-jar", jar_of(launch.argv), "restore", f"--backup={name}", f"--data={d}",
                    f"--nodes={n}", f"--index={i}", f"--kvlab.backup.target={target}"]
            logfile = self.out / f"restore-n{i}.log"
            log(f"restore: n{i} from {name} into {tools.rel(d)}")
            t = time.monotonic()
            with open(logfile, "w") as f:
                code = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                                      env=launch.env, cwd=launch.cwd, timeout=3600, check=False).returncode
            took = time.monotonic() - t
            total += took
            nodes.append({"node": f"n{i}", "exit_code": code, "seconds": round(took, 3),
                          "bytes": du(d) if d.exists() else 0, "command": " ".join(argv), "log": logfile.name})
            if code != 0:
                lines = logfile.read_text(errors="replace").strip().splitlines()
                last = lines[-1].strip()[:200] if lines else "no output"
                raise RuntimeError(f"the restore of n{i} exited with {code}: {last} (see {tools.rel(logfile)})")
        return {"backup": name, "seconds": round(total, 3), "nodes": nodes, "bytes": sum(x["bytes"] for x in nodes)}

    def start(self) -> dict:
        """Every node started again as it was started before (its log appended to); the seconds
        until all of them answered (START_TIMEOUT, scripts/local-cluster.sh's, at most; 300 s
        unless set: a busy machine takes minutes to start three JVMs)."""
        timeout_s = float(os.environ.get("START_TIMEOUT") or 300)
        t = time.monotonic()
        procs = []
        for i, launch in enumerate(self.launches):
            out = open(launch.log, "a") if launch.log else subprocess.DEVNULL
            try:
                p = tools.spawn(launch.argv, out, env=launch.env, cwd=launch.cwd)
            finally:
                if launch.log:
                    out.close()
            procs.append(p)
            self.executor.restarted(i, p.pid)
        deadline = t + timeout_s
        for i, p in enumerate(procs):
            while not faults.answers(self.cfg.targets[i]):
                if p.poll() is not None:
                    raise RuntimeError(f"node n{i} exited with {p.returncode} after the restore; see {self.launches[i].log}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"node n{i} did not answer within {timeout_s:g} s after the restore")
                time.sleep(0.2)
        return {"seconds": round(time.monotonic() - t, 3)}

    # ---- the check

    def read(self, keys: list[str], tag: str) -> dict[str, Held]:
        """What the cluster answers for each key, read through the client API from every replica of
        the key (replicas=from/from, so a record any replica holds is found), the keys shared out
        over the nodes."""
        n = len(self.cfg.targets)
        count = read_count(self.cfg.replicas, n)
        shares = [keys[i::n] for i in range(n)]
        with ThreadPoolExecutor(max_workers=n) as pool:
            parts = pool.map(lambda i: _read_keys(self.cfg.targets[i], shares[i], tag, f"{count}/{count}"), range(n))
            out: dict[str, Held] = {}
            for part in parts:
                out |= part
        return out


def _running(pid: int) -> bool:
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _read_keys(target: str, keys: list[str], tag: str, replicas: str) -> dict[str, Held]:
    u = urlparse(target)
    conn = None
    out = {}
    for key in keys:
        path = f"/v0/entity?id={quote(key, safe='')}&replicas={replicas}"
        status, body = None, b""
        for _ in range(READ_TRIES):
            try:
                conn = conn or http.client.HTTPConnection(u.hostname, u.port, timeout=READ_TIMEOUT_S)
                conn.request("GET", path)
                r = conn.getresponse()
                status, body = r.status, r.read()
                if r.will_close:
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException):
                if conn:
                    conn.close()
                conn, status = None, None
            if status in (200, 404):
                break
            time.sleep(0.5)
        out[key] = held_of(status, seq_in(tag, key, body) if status == 200 else None)
    if conn:
        conn.close()
    return out
