"""Each kvlab pod's management port (its Prometheus page, the kvlab actuator) through one
long-lived `kubectl exec` per pod: a shell loop in the node's container reads one request a line
on its stdin and answers with curl's output and a marker line. A request then costs a curl inside
the pod, not a new kubectl process and API connection here, so every pod can be scraped once a
second on a two-core machine. A request has a deadline; at most one is in flight per pod (a node
that does not answer, such as a paused one, costs its deadline and piles nothing up); an exec that
ended (its container restarted) is started again, no more often than every retry_s."""

from __future__ import annotations

import math
import subprocess
import threading
import time
from collections.abc import Callable

from .kubectl import Kubectl, parallel

ANSWER = "KVLAB-HTTP "
# In the node's container, which has curl and knows its management port (MANAGEMENT_SERVER_PORT)
# and its secret file (KVLAB_CLUSTER_SECRET_FILE).
LOOP = r"""port=${MANAGEMENT_SERVER_PORT:-9080}
while read -r n method limit path; do
  if [ "$method" = POST ]; then
    # A state-changing call needs the cluster's secret, the pod's own file, as its credential; it
    # goes to curl on its stdin, not on a command line.
    out=$(printf 'Authorization: Bearer %s\n' "$(cat "${KVLAB_CLUSTER_SECRET_FILE:-/etc/kvlab/cluster-secret}")" |
      curl -sS -f -m "$limit" -X POST -H @- -H 'Content-Type: application/json' -d '{}' \
      "http://127.0.0.1:$port$path" 2>&1)
  else
    out=$(curl -sS -f -m "$limit" "http://127.0.0.1:$port$path" 2>&1)
  fi
  rc=$?
  printf '%s\nKVLAB-HTTP %s %s\n' "$out" "$n" "$rc"
done"""
MAX_ANSWER = 8 << 20  # characters kept of one answer; a Prometheus page is some 50 KB


class Channel:
    """One pod's management port through its own `kubectl exec -i`."""

    def __init__(
        self,
        kubectl: Kubectl,
        pod: str,
        container: str = "kvlab",
        retry_s: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
        loop: str = LOOP,
    ):
        self.kubectl = kubectl
        self.loop = loop  # the shell loop that answers: LOOP, or another one of its protocol
        self.pod = pod
        self.container = container
        self.retry_s = retry_s
        self.clock = clock
        self.starts = 0
        self._proc: subprocess.Popen | None = None
        self._started = -math.inf
        self._ended = ""  # why the last exec ended
        self._sent = 0  # the last request's number (per exec)
        self._answered = 0
        self._answer: tuple[int, str] = (0, "")
        self._one = threading.Lock()  # one request at a time
        self._cond = threading.Condition()

    def request(self, path: str, method: str = "GET", timeout: float = 1.0) -> str:
        """The body of GET (or POST with {}) path on the pod's management port; RuntimeError with
        why not, within timeout seconds."""
        deadline = self.clock() + timeout
        if not self._one.acquire(timeout=max(0.0, timeout)):
            raise RuntimeError(f"{self.pod}: another request is still waiting")
        try:
            proc = self._running()
            with self._cond:
                # An earlier request whose caller gave up may still run in the pod: its answer comes first.
                done = lambda: self._answered >= self._sent or self._proc is not proc  # noqa: E731
                if not self._cond.wait_for(done, self._left(deadline)):
                    raise RuntimeError(f"{self.pod}: an earlier request is still unanswered")
                self._check(proc)
                self._sent += 1
                n = self._sent
            limit = max(0.2, (deadline - self.clock()) * 0.9)
            try:
                proc.stdin.write(f"{n} {method} {limit:.1f} {path}\n")
                proc.stdin.flush()
            except (OSError, ValueError) as e:
                with self._cond:  # it ended: its reader says why
                    self._cond.wait_for(lambda: self._proc is not proc, self._left(deadline))
                    self._check(proc)
                raise RuntimeError(f"{self.pod}: the kubectl exec is gone ({e})") from e
            with self._cond:
                answered = lambda: self._answered >= n or self._proc is not proc  # noqa: E731
                if not self._cond.wait_for(answered, self._left(deadline)):
                    raise RuntimeError(f"{self.pod}: no answer from {path} in {timeout:.1f} s")
                self._check(proc)
                rc, text = self._answer
            if rc != 0:
                raise RuntimeError(f"{self.pod}: {path}: curl exited {rc}: {text.strip()[-300:]}")
            return text
        finally:
            self._one.release()

    def _left(self, deadline: float) -> float:
        return max(0.0, deadline - self.clock())

    def _check(self, proc: subprocess.Popen) -> None:
        if self._proc is not proc:
            raise RuntimeError(f"{self.pod}: {self._ended}")

    def _running(self) -> subprocess.Popen:
        """The exec, started when there is none or the last one ended retry_s ago or more."""
        with self._cond:
            if self._proc is not None:
                return self._proc
            if self.clock() - self._started < self.retry_s:
                raise RuntimeError(f"{self.pod}: {self._ended or 'not started'}")
            argv = self.kubectl.argv("exec", "-i", self.pod, "-c", self.container, "--", "sh", "-c", self.loop)
            self._started = self.clock()
            self.starts += 1
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    errors="replace",
                    bufsize=1,
                )
            except OSError as e:
                self._ended = f"could not run kubectl: {e}"
                raise RuntimeError(f"{self.pod}: {self._ended}") from e
            self._proc, self._sent, self._answered = proc, 0, 0
        threading.Thread(target=self._read, args=(proc,), name=f"management-{self.pod}", daemon=True).start()
        return proc

    def _read(self, proc: subprocess.Popen) -> None:
        lines: list[str] = []
        size = 0
        for line in proc.stdout:
            if line.startswith(ANSWER):
                fields = line.split()
                with self._cond:
                    self._answered = int(fields[1])
                    self._answer = (int(fields[2]), "".join(lines))
                    self._cond.notify_all()
                lines, size = [], 0
            elif size < MAX_ANSWER:
                lines.append(line)
                size += len(line)
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        with self._cond:
            if self._proc is proc:
                tail = "".join(lines).strip()[-300:]
                self._ended = f"kubectl exec ended (exit {proc.returncode})" + (f": {tail}" if tail else "")
                self._proc = None
            self._cond.notify_all()

    def close(self) -> None:
        """Ends the exec: the loop ends with its stdin; kubectl is killed if it lingers."""
        with self._cond:
            proc, self._proc = self._proc, None
            self._ended = "closed"
            self._started = math.inf
            self._cond.notify_all()
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Management:
    """The channels to a release's pods, by pod name; requests to all of them at once."""

    def __init__(self, kubectl: Kubectl, pods: list[str], retry_s: float = 3.0):
        self.channels = {pod: Channel(kubectl, pod, retry_s=retry_s) for pod in pods}

    def get_all(self, path: str, timeout: float) -> dict[str, str | Exception]:
        """Each pod's answer, or the exception that says why there is none."""
        pods = list(self.channels)
        answers = parallel(lambda pod: self.channels[pod].request(path, timeout=timeout), pods)
        return dict(zip(pods, answers))

    def request(self, pod: str, path: str, method: str = "GET", timeout: float = 5.0) -> str:
        return self.channels[pod].request(path, method, timeout)

    def close(self) -> None:
        for channel in self.channels.values():
            channel.close()
