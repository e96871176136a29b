"""Soak the embedded arena: `make run`'s processes for hours, the ladder at full speed.

    python -m benchmarks.soak --hours 2 [--port 8100] [--bots 3] [--var-dir DIR]
                              [--report-every 300] [--log soak.log]

(``python -m benchmarks.soak_production`` soaks docker/'s processes instead, with the same
arguments and a few of its own.)

Runs ``scripts/run-dev`` (web server, Celery worker, beat; SQLite and the embedded
broker in a fresh ``--var-dir``) with the ladder ticking every second, and ``--bots``
HTTP bots (``cardkit serve``, greedy, random and strong in turn, on the ports after
``--port``), each registered by a user of its own through the API, so that the ladder
seats them beside the built-in players. Every ``--report-every`` seconds, and at the end,
it writes to ``--log`` (and prints) one report:

- ``crashes``: run-dev or a bot server that exited by itself (each is started again and
  counted in ``restarts``), and worker pool processes that were replaced;
- ``matches``: ladder matches finished, aborted and forfeited, and their rate per hour;
- ``errors``: log lines at ERROR or CRITICAL and tracebacks in run-dev's output, with
  the first few;
- ``rss_mb``: the resident memory of each process of the arena (web, worker, pool,
  beat, bots) now, at the first sample and at its largest, so that growth shows;
- ``broker_files``: message files waiting in the embedded broker's folder.

The exit status is 0 when nothing crashed and no error was logged, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from benchmarks import harness, machine
from benchmarks.harness import BASE_DIR
from benchmarks.soak_memory import RssSeries

STRATEGIES = ("greedy", "random", "strong")
ERROR_LINE = re.compile(r"\b(ERROR|CRITICAL)\b|^Traceback|Unrecoverable error")
# Settings variables of the calling shell that would change the arena under test.
SETTINGS_PREFIXES = ("DATABASE_", "CELERY_", "CACHE_URL", "DEBUG", "SECRET_KEY", "THROTTLE_")


def soak_arguments(prog: str, description: str | None) -> argparse.ArgumentParser:
    """Return the arguments every soak takes (``benchmarks.soak_production`` adds its own)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--port", type=int, default=8100, help="web port; bots use the next")
    parser.add_argument("--bots", type=int, default=3)
    parser.add_argument("--var-dir", type=Path, help="default: a new temporary folder")
    parser.add_argument("--report-every", type=float, default=300.0, help="seconds")
    parser.add_argument("--log", type=Path, help="default: <var-dir>/soak.log")
    parser.add_argument(
        "--json", type=Path, help="also write the reports and each process's RSS a minute here"
    )
    return parser


def soak_prepare(args: argparse.Namespace) -> tuple[Path, Path]:
    """Make ``SIGTERM`` end the soak as Ctrl-C does; return its folder and its log."""
    # SIGTERM, or SIGINT even where a shell started the soak in the background with SIGINT
    # ignored, ends it as Ctrl-C does: a final report, and the arena's processes stopped.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    var_dir = (args.var_dir or Path(tempfile.mkdtemp(prefix="cardserver-soak-"))).resolve()
    var_dir.mkdir(parents=True, exist_ok=True)
    return var_dir, args.log or var_dir / "soak.log"


def main(argv: list[str] | None = None) -> int:
    args = soak_arguments("python -m benchmarks.soak", __doc__).parse_args(argv)
    var_dir, log = soak_prepare(args)
    soak = Soak(var_dir, args.port, args.bots, log, json_path=args.json)
    return soak.run(args.hours * 3600, args.report_every)


class Soak:
    def __init__(
        self, var_dir: Path, port: int, bots: int, log: Path, *, json_path: Path | None = None
    ) -> None:
        self.var_dir = var_dir
        self.json_path = json_path
        self.rss_series = RssSeries()
        self.reports: list[dict] = []
        self.port = port
        self.bot_count = bots
        self.log = log
        self.api = f"http://127.0.0.1:{port}/api/v1"
        self.environment = {
            k: v for k, v in os.environ.items() if not k.startswith(SETTINGS_PREFIXES)
        }
        self.environment.update(
            CARDSERVER_VAR_DIR=str(var_dir),
            RUN_ADDRESS=f"127.0.0.1:{port}",
            PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
            PYTHONUNBUFFERED="1",
        )
        self.run_dev: subprocess.Popen | None = None
        self.run_dev_log = var_dir / "run-dev.log"
        self.bots: dict[str, dict] = {}
        self.crashes: list[dict] = []
        self.restarts = 0
        self.pool_pids: set[int] = set()
        self.rss_first: dict[str, float] = {}
        self.rss_max: dict[str, float] = {}
        self.started = time.time()

    # --- Processes ----------------------------------------------------------------------

    def manage(self, *arguments: str) -> None:
        subprocess.run(
            [sys.executable, "manage.py", *arguments],
            cwd=BASE_DIR, env=self.environment, check=True, capture_output=True, timeout=600,
        )  # fmt: skip

    def start_run_dev(self) -> None:
        run_dev = [str(BASE_DIR / "scripts" / "run-dev")]
        self.run_dev = self.start_process(run_dev, self.run_dev_log)
        self.wait_for_health(see=self.run_dev_log)

    def start_process(self, command: list[str], log: Path):
        """Start one of the arena's processes, in the arena's environment alone."""
        return harness.start(command, env=self.environment, inherit=False, log=log)

    def wait_for_health(self, *, see: Path) -> None:
        harness.wait_until(lambda: harness.answers(f"{self.api}/health/"), timeout=120,
                           what=f"the arena's health check (see {see})")  # fmt: skip

    def start_bot(self, name: str) -> None:
        bot = self.bots[name]
        bot["process"] = self.start_process(
            [sys.executable, "-m", "cardkit", "serve", bot["strategy"],
             "--port", str(bot["port"]), f"--secret={bot['secret']}"],
            self.var_dir / f"bot-{name}.log",
        )  # fmt: skip

    def register_bots(self) -> None:
        with httpx.Client(base_url=self.api, timeout=30) as http:
            for index in range(self.bot_count):
                strategy = STRATEGIES[index % len(STRATEGIES)]
                name = f"soak-{strategy}-{index}"
                answer = http.post(
                    "/accounts/signup/",
                    json={"username": f"soak{index}", "password": f"soak-passphrase-{index}"},
                )
                answer.raise_for_status()
                headers = {"Authorization": f"Token {answer.json()['token']}"}
                port = self.port + 1 + index
                answer = http.post(
                    "/bots/",
                    headers=headers,
                    json={"name": name, "kind": "http", "url": f"http://127.0.0.1:{port}/",
                          "games": ["durak", "volynshchik"]},
                )  # fmt: skip
                answer.raise_for_status()
                self.bots[name] = {
                    "strategy": strategy,
                    "port": port,
                    "secret": answer.json()["secret"],
                    "headers": headers,
                }
                self.start_bot(name)
            time.sleep(2)
            for name, bot in self.bots.items():
                http.post(f"/bots/{name}/ping/", headers=bot["headers"]).raise_for_status()

    def stop(self) -> None:
        harness.stop_process_groups(
            [bot.get("process") for bot in self.bots.values()] + [self.run_dev]
        )

    def check_processes(self) -> None:
        """Record and restart any process that exited by itself."""
        if self.run_dev.poll() is not None:
            self.crash("run-dev", self.run_dev.returncode, harness.log_tail(self.run_dev_log))
            # What the script left running goes with it, at once.
            harness.stop_process_group(self.run_dev, timeout=0)
            self.restarts += 1
            self.start_run_dev()
        for name, bot in self.bots.items():
            if bot["process"].poll() is not None:
                self.crash(name, bot["process"].returncode, "")
                self.restarts += 1
                self.start_bot(name)

    def crash(self, what: str, status: int | None, tail: str) -> None:
        self.crashes.append(
            {"at": _now(), "process": what, "status": status, "log_tail": tail[-2000:]}
        )

    # --- Figures ------------------------------------------------------------------------

    def sessions(self) -> dict[int, str]:
        """Return {process group: what it is} of the arena's processes."""
        sessions = {self.run_dev.pid: "arena"}
        sessions.update({bot["process"].pid: "bots" for bot in self.bots.values()})
        return sessions

    def kind(self, command: str, session: str, ppid: int) -> str | None:
        return _kind(command, session, ppid)

    def log_lines(self) -> list[str]:
        return harness.log_lines(self.run_dev_log)

    def backlog(self) -> dict:
        return {"broker_files": len(list((self.var_dir / "celery" / "queue").glob("*.msg")))}

    def extra_report(self) -> dict:
        return {}

    def faults(self) -> int:
        """Faults seen by the soak's own clients, which fail it like errors."""
        return 0

    def processes(self) -> dict[str, list[tuple[int, float]]]:
        """Return {kind: [(pid, RSS in MB)]} of the arena's processes."""
        sessions = self.sessions()
        found: dict[str, list[tuple[int, float]]] = {}
        for process in machine.session_processes(sessions):
            kind = self.kind(process.command, sessions[process.session], process.parent)
            if kind:
                found.setdefault(kind, []).append((process.pid, process.rss_mib))
        return found

    def report(self, final: bool = False) -> dict:
        processes = self.processes()
        pool = {pid for pid, _ in processes.get("worker pool", [])}
        self.pool_pids |= pool
        rss = {kind: round(sum(mb for _, mb in entries), 1) for kind, entries in processes.items()}
        for kind, mb in rss.items():
            self.rss_first.setdefault(kind, mb)
            self.rss_max[kind] = max(self.rss_max.get(kind, 0.0), mb)
        errors = [line for line in self.log_lines() if ERROR_LINE.search(line)]
        hours = (time.time() - self.started) / 3600
        matches = self.matches()
        finished = matches.get("finished")
        report = {
            "at": _now(),
            "final": final,
            "hours": round(hours, 3),
            "crashes": len(self.crashes),
            "restarts": self.restarts,
            "pool_processes_replaced": max(0, len(self.pool_pids) - len(pool)) if pool else None,
            "matches": matches,
            "matches_per_hour": round(finished / hours) if finished and hours else None,
            "errors": len(errors),
            "first_errors": errors[:5],
            "rss_mb": {
                kind: {"now": mb, "first": self.rss_first[kind], "max": self.rss_max[kind]}
                for kind, mb in sorted(rss.items())
            },
            **self.backlog(),
            "bots": self.bot_health(),
            **self.extra_report(),
        }
        if final:
            report["crash_details"] = self.crashes
            report["rss_per_process"] = self.rss_series.summary()
        self.reports.append(report)
        with self.log.open("a") as log:
            log.write(json.dumps(report) + "\n")
        print(_summary(report), flush=True)
        return report

    def django_json(self, code: str, *, timeout: float = 300) -> object:
        """What ``code`` prints last, as JSON, run in a process set up on the arena's settings
        (its database): the benchmarks' reads of the arena's figures."""
        result = subprocess.run(
            [sys.executable, "-c", f"import django; django.setup(); {code}"], cwd=BASE_DIR,
            env={**self.environment, "DJANGO_SETTINGS_MODULE": "cardserver.settings"},
            capture_output=True, text=True, timeout=timeout, check=True,
        )  # fmt: skip
        return json.loads(result.stdout.strip().splitlines()[-1])

    def matches(self) -> dict:
        code = (
            "import json; from benchmarks.arena_counts import archive_counts; "
            "print(json.dumps(archive_counts()))"
        )
        try:
            return self.django_json(code, timeout=120)
        except (subprocess.SubprocessError, ValueError, IndexError) as exc:
            return {"unavailable": f"{type(exc).__name__}: {exc}"}

    def monitor(self) -> dict:
        """A bot owner's token, for the soak's own reads: anonymous, they shared this IP's
        rate limit with the spectators (production shape), whose lists and streams used
        it up, and the report said ``unavailable: KeyError 'count'`` instead of counts."""
        return next((bot["headers"] for bot in self.bots.values()), {})

    def bot_health(self) -> dict:
        try:
            answer = httpx.get(f"{self.api}/bots/?kind=http", timeout=30, headers=self.monitor())
            bots = answer.json()["results"]
        except (httpx.HTTPError, KeyError, ValueError):
            return {}
        return {bot["name"]: bot.get("healthy") for bot in bots}

    # --- The run ------------------------------------------------------------------------

    def run(self, seconds: float, report_every: float) -> int:
        self.manage("migrate", "--noinput")
        self.manage("ladder", "on", "--every", "1")
        return self.soak(seconds, report_every)

    def soak(self, seconds: float, report_every: float, before_loop=None) -> int:
        print(f"soak: {seconds / 3600:g} h in {self.var_dir}, report to {self.log}", flush=True)
        self.started = time.time()
        try:
            self.start_run_dev()
            self.register_bots()
            if before_loop is not None:
                before_loop()
            deadline = time.monotonic() + seconds
            next_report = time.monotonic() + min(report_every, 60)
            self.report()
            while time.monotonic() < deadline:
                time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
                self.check_processes()
                if self.rss_series.due():
                    self.rss_series.sample(self.processes())
                if time.monotonic() >= next_report:
                    self.report()
                    next_report = time.monotonic() + report_every
            final = self.report(final=True)
        except KeyboardInterrupt:
            final = self.report(final=True)
        finally:
            self.stop()
        status = 0 if not final["crashes"] and not final["errors"] and not self.faults() else 1
        if self.json_path is not None:
            self.write_json(seconds, status)
        return status

    def write_json(self, seconds: float, status: int) -> None:
        figures = {
            "hours_asked": round(seconds / 3600, 3),
            "status": status,
            "reports": self.reports,
            "rss_samples": self.rss_series.samples,
            "rss_per_process": self.rss_series.summary(),
        }
        harness.write_json(self.json_path, figures, indent=1)


def _interrupt(signum: int, frame) -> None:
    raise KeyboardInterrupt


def _kind(command: str, session: str, ppid: int) -> str | None:
    if session == "bots":
        return "bots"
    if "runserver" in command or "uvicorn" in command or "gunicorn" in command:
        return "web"
    if " beat" in command:
        return "beat"
    if " worker" in command:
        return "worker main" if _is_main(ppid) else "worker pool"
    return None


def _is_main(ppid: int) -> bool:
    """Whether a worker process's parent is not itself a worker (run-dev's shell)."""
    command = machine.command_line(ppid)
    return command is None or "worker" not in command


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _summary(report: dict) -> str:
    rss = ", ".join(
        f"{kind} {values['now']:.0f} MB (first {values['first']:.0f}, max {values['max']:.0f})"
        for kind, values in report["rss_mb"].items()
    )
    return (
        f"[{report['at']}] {report['hours']:.2f} h: crashes {report['crashes']}, restarts "
        f"{report['restarts']}, pool replaced {report['pool_processes_replaced']}; matches "
        f"{report['matches']} ({report['matches_per_hour']}/h); errors {report['errors']}; "
        f"{_backlog(report)}; {_streams(report)}bots healthy {report['bots']}; RSS {rss}"
    )


def _backlog(report: dict) -> str:
    if "broker_queues" in report:
        return f"broker queues {report['broker_queues']}"
    return f"broker files {report['broker_files']}"


def _streams(report: dict) -> str:
    return f"streams {report['streams']}; " if "streams" in report else ""


if __name__ == "__main__":
    sys.exit(main())
