"""A throwaway PostgreSQL server for the tests and the benchmarks.

Input: nothing but the machine: Debian's server binaries (``/usr/lib/postgresql/*/bin``,
or ``initdb`` on the PATH). Output: ``start()`` gives a ``Server`` (its ``url``)
running ``initdb`` + ``pg_ctl`` in a new temporary directory on a free loopback port, as
user ``postgres`` when run as root (PostgreSQL refuses to run as root); ``stop()``
removes it; ``create_database`` makes a fresh database on a server. ``binaries()`` is
None when PostgreSQL is not installed, with ``ABSENT`` the reason.

``python -m benchmarks.pgserver`` starts one and prints its URL, until interrupted.
``.ci/run`` starts its server with the same commands in shell, and exports the URL as
``ASSEMBLER_TEST_POSTGRES``; the tests' fixture uses that URL when it is set.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ABSENT", "ENV", "Server", "binaries", "create_database", "start"]

# the variable .ci/run exports the URL of its server in
ENV = "ASSEMBLER_TEST_POSTGRES"
ABSENT = "PostgreSQL is not installed (apt-get install postgresql)"


def binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``, the newest version installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return None if initdb is None else Path(initdb).parent


def _version(path: str) -> int:
    part = Path(path).parts[-3]
    return int(part) if part.isdigit() else 0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@dataclass
class Server:
    folder: Path
    port: int
    bin: Path
    user: str | None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        _run(self, "pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)

    def pause(self) -> None:
        """Stop the server, keeping its data (an outage; ``resume`` ends it)."""
        _run(self, "pg_ctl", "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the paused server again on its port."""
        done = _run(self, "pg_ctl", "-D", str(self.folder / "data"), "-l",
                    str(self.folder / "log"), "-o", _options(self.port), "-w", "-t", "60",
                    "start")  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()}")


def create_database(url: str, name: str) -> str:
    """A new, empty database ``name`` on the server of ``url`` (an administrator's
    address); its URL."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = url.rpartition("/")
    return f"{base}/{name}"


def _run(server: Server, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(server.bin / tool), *args]
    if server.user is not None:
        command = ["runuser", "-u", server.user, "--", *command]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def start() -> Server:
    """initdb + pg_ctl start in a new temporary folder, listening on 127.0.0.1 only
    (no Unix socket), every local connection trusted; RuntimeError if it fails."""
    folder_bin = binaries()
    if folder_bin is None:
        raise RuntimeError(ABSENT)
    folder = Path(tempfile.mkdtemp(prefix="assembler-pg-"))
    user = "postgres" if os.geteuid() == 0 else None
    if user is not None:
        shutil.chown(folder, user)
    server = Server(folder, _free_port(), folder_bin, user)
    data = folder / "data"
    done = _run(server, "initdb", "-D", str(data), "-U", "postgres", "--auth=trust",
                "--no-sync", "-E", "UTF8", "--locale=C")  # fmt: skip
    if done.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {done.stderr.strip() or done.stdout.strip()}")
    done = _run(server, "pg_ctl", "-D", str(data), "-l", str(folder / "log"), "-o",
                _options(server.port),
                "-w", "-t", "60", "start")  # fmt: skip
    if done.returncode != 0:
        log = (folder / "log").read_text(errors="replace") if (folder / "log").exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()} {log[-500:]}")
    return server


def _options(port: int) -> str:
    return f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories=''"


def main() -> int:
    server = start()
    print(server.url, flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    sys.exit(main())
