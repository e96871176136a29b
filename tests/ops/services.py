"""Private PostgreSQL and Redis servers for fault tests, started and stopped by the test.

The machine's shared servers are never touched: each of these runs from a temporary
folder on a free port of its own, and is killed when the test ends.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from benchmarks.harness import accepts, free_port, wait_until

# --- PostgreSQL -------------------------------------------------------------------------


def postgres_bin() -> Path | None:
    """Return the folder of the newest PostgreSQL server binaries on this machine."""
    folders = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2])
    )
    for folder in reversed(folders):
        if Path(folder, "pg_ctl").exists():
            return Path(folder)
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).parent if pg_ctl else None


class PrivatePostgres:
    """A PostgreSQL cluster in ``folder`` on a free port, user ``postgres``, trust auth.

    PostgreSQL refuses to run as root, so as root the commands run as the ``postgres``
    system user, which then owns the folder: a new one under the system's temporary
    folder, since pytest's own (``/tmp/pytest-of-root``) is closed to other users.
    ``remove()`` deletes it.
    """

    def __init__(self) -> None:
        self.bin = postgres_bin()
        if self.bin is None:
            raise RuntimeError("no PostgreSQL server binaries (pg_ctl, initdb) found")
        self.folder = Path(tempfile.mkdtemp(prefix="cardserver-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=120)

    def init(self) -> PrivatePostgres:
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.as_postgres:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
            "--no-sync", "-E", "UTF8",
        )  # fmt: skip
        return self

    def start(self) -> None:
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w",
            "-t", "60", "-o",
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=100",
            "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def createdb(self, name: str) -> str:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return self.url(name)

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def log(self) -> str:
        try:
            return (self.folder / "server.log").read_text()[-3000:]
        except OSError:
            return ""


# --- Redis ------------------------------------------------------------------------------


class PrivateRedis:
    """A redis-server in ``folder`` on a free port, its data kept in an append-only file.

    ``fsync always``: every message written before a crash or restart is there after it,
    as with the compose file's Redis (``appendonly yes``).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
             "--dir", str(self.folder), "--appendonly", "yes", "--appendfsync", "always",
             "--save", "", "--protected-mode", "no"],
            stdout=open(self.folder / "redis.log", "ab"),  # noqa: SIM115 - the server owns it
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        wait_until(lambda: accepts(self.port), timeout=30, what="redis-server")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server (SIGTERM: it writes its data and exits; SIGKILL: a crash)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=30)
        wait_until(lambda: not accepts(self.port), timeout=10, what="redis-server to stop")
