"""The shared machine, as a benchmark sees it: who spends its CPU, and how fast it is now.

Eight people may share two cores: a benchmark waits for the machine to go quiet
(``wait_for_idle``), measures the CPU its own processes spent (``processes_cpu``,
``cpu_since``, ``own_cpu``) against the whole machine's (``machine_cpu``), and times a
fixed piece of Python before each run (``calibrate``), since a virtual machine also
changes speed with nothing of its own to show for it. A benchmark that starts workers
reads the CPU time and resident memory of their process groups (``group_cpu_s``,
``group_rss_mib``); a soak reads each process of its sessions (``session_processes``).
Linux only (``/proc``).
"""

from __future__ import annotations

import os
import random
import re
import resource
import time
from dataclasses import dataclass
from pathlib import Path


def own_cpu() -> float:
    """Return the CPU seconds this process has used so far (all its threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


_TICKS = os.sysconf("SC_CLK_TCK")


def machine_cpu() -> tuple[float, float]:
    """Return (busy, total) CPU seconds of the whole machine so far (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    total = sum(fields[:8])
    return (total - idle) / _TICKS, total / _TICKS


def calibrate() -> float:
    """Return the milliseconds a fixed piece of pure Python takes now (lower is faster).

    The machine's speed varies beyond what other processes take (a virtual machine's
    host is shared too); this figure, taken before each run, says how fast it was.
    """
    from cardkit.engine import load_game

    game = load_game("durak", players=2)
    started = time.perf_counter()
    for seed in range(200):
        state = game.deal(seed=seed)
        rng = random.Random(seed)
        while not state.is_over:
            state = state.play(rng.choice(state.legal_moves()))
    return 1000 * (time.perf_counter() - started)


def wait_for_idle(*, busy_below: float, timeout: float) -> float:
    """Wait until other processes use less than ``busy_below`` cores; return that use.

    The machine is shared: a run measured while something else computes measures that
    too. Gives up (and returns the last figure) after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        busy0, _ = machine_cpu()
        time.sleep(2)
        busy = (machine_cpu()[0] - busy0) / 2
        if busy < busy_below or time.monotonic() > deadline:
            return busy


def command_line(pid: int) -> str | None:
    """Return the command line of process ``pid``, its arguments joined by spaces (None if
    it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None


def processes_cpu(match: str) -> dict[int, float]:
    """Return ``{pid: CPU seconds so far}`` of the processes whose command line has ``match``
    as a whole word: ``127.0.0.1:8650`` is not found in ``127.0.0.1:86500``, nor a database
    ``bench`` in ``bench2``."""
    pattern = re.compile(rf"(?<![\w.]){re.escape(match)}(?!\w)")
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        command = command_line(int(entry.name))
        if command is None or not pattern.search(command):
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(entry.name)] = (int(fields[11]) + int(fields[12])) / _TICKS
    return found


def cpu_since(before: dict[int, float], match: str) -> float:
    """Return the CPU seconds the processes matching ``match`` used since ``before``.

    A process that started meanwhile counts in full; one that ended (PostgreSQL ends a
    backend when Django closes a connection older than ``CONN_MAX_AGE``) is left out, so
    the figure can be a little low, never negative.
    """
    now = processes_cpu(match)
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in now.items())


def every_process_cpu() -> dict[int, tuple[str, float]]:
    """Return ``{pid: (command name, CPU seconds so far)}`` of every process on the machine."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name, fields = (entry / "stat").read_text().rsplit(")", 1)
        except OSError:
            continue
        fields = fields.split()
        cpu = (int(fields[11]) + int(fields[12])) / _TICKS
        found[int(entry.name)] = (name.split("(", 1)[1], cpu)
    return found


def busiest_since(before: dict[int, tuple[str, float]], seconds: float, *, exclude: set[int],
                  top: int = 5) -> list[tuple[str, float]]:  # fmt: skip
    """Return the ``top`` command names by cores used since ``before``, ``exclude`` left out.

    What "other work" was: another session's tests, PostgreSQL's background writers,
    Redis, the kernel's threads.
    """
    cores: dict[str, float] = {}
    for pid, (name, cpu) in every_process_cpu().items():
        if pid in exclude:
            continue
        used = cpu - before.get(pid, (name, 0.0))[1]
        if used > 0:
            cores[name] = cores.get(name, 0.0) + used / seconds
    return sorted(((n, round(c, 3)) for n, c in cores.items()), key=lambda x: -x[1])[:top]


_STAT_COLUMNS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def machine_columns() -> dict[str, float]:
    """Return the machine's CPU seconds so far by kind (/proc/stat: user, system, softirq,
    steal...): time in softirq or stolen by the host is no process's."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    return {name: int(value) / _TICKS for name, value in zip(_STAT_COLUMNS, fields, strict=False)}


def process_counters(pids) -> dict[str, float]:
    """Sum, over ``pids``, of user and system CPU seconds, minor page faults and context
    switches (voluntary, and involuntary: preempted, waiting for a core)."""
    total = {"user": 0.0, "system": 0.0, "minor_faults": 0, "voluntary": 0, "involuntary": 0}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            # A process's switches are its threads' (its own status counts its first only).
            lines = [
                line
                for task in Path(f"/proc/{pid}/task").iterdir()
                for line in (task / "status").read_text().splitlines()
                if "ctxt_switches:" in line
            ]
        except OSError:
            continue
        total["user"] += int(fields[11]) / _TICKS
        total["system"] += int(fields[12]) / _TICKS
        total["minor_faults"] += int(fields[7])
        for line in lines:
            kind, count = line.split(":")
            total["involuntary" if kind.startswith("non") else "voluntary"] += int(count)
    return total


# -- process groups: the workers' CPU and memory ------------------------------------------


def group_pids(pid: int) -> list[int]:
    """The processes of the group led by ``pid``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pid:
                    pids.append(int(entry.name))
            except (OSError, ProcessLookupError):
                continue
    return pids


def group_cpu_s(group) -> float:
    """The CPU seconds (user and system) the process groups led by ``group`` used so far."""
    return pids_cpu_s([pid for worker in group for pid in group_pids(worker.pid)])


def redis_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "redis-server":
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def pids_cpu_s(pids: list[int]) -> float:
    """The CPU seconds (user and system) these processes used so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def _rss_kib(status: str) -> int | None:
    """The resident set (``VmRSS``, KiB) in a ``/proc/<pid>/status`` text; None for a
    process without one (a kernel thread, a zombie)."""
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def pids_rss_mib(pids) -> float:
    """The resident memory of the processes ``pids`` (those still there), in MiB."""
    total = 0
    for pid in pids:
        try:
            total += _rss_kib(Path(f"/proc/{pid}/status").read_text()) or 0
        except OSError:
            continue
    return total / 1024


def group_rss_mib(pid: int) -> float:
    """The resident memory of the process group led by ``pid``, in MiB."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != pid:
                continue
            total += _rss_kib((entry / "status").read_text()) or 0
        except (OSError, ProcessLookupError):
            continue
    return round(total / 1024, 1)


@dataclass(frozen=True, slots=True)
class ProcessSample:
    """One process as ``/proc`` shows it now."""

    pid: int
    parent: int
    session: int
    command: str
    rss_mib: float


def session_processes(sessions) -> list[ProcessSample]:
    """Every process with a resident set in the sessions ``sessions`` (the ids of their
    leaders: what ``benchmarks.harness.start`` returns), with its resident memory now."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[3]) not in sessions:
                continue
            rss = _rss_kib((entry / "status").read_text())
        except OSError:
            continue
        command = command_line(int(entry.name))
        if rss is not None and command is not None:
            found.append(ProcessSample(int(entry.name), int(stat[1]), int(stat[3]), command,
                                       rss / 1024))  # fmt: skip
    return found
