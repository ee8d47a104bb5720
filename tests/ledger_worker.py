"""A separate OS process that writes to a ledger, for the ledger's process tests.

Run as ``python tests/ledger_worker.py MODE ...``; it prints one JSON line on stdout.

* ``record LEDGER SESSION COUNT SEED [LOCK]``: COUNT compilations of generated
  requests (every result through the verifier); prints their trace ids in order.
  LEDGER may be a PostgreSQL URL, LOCK its store's lock mode.
* ``huge URL``: one compilation of a request carrying ~40 MB of content, in a
  PostgreSQL ledger (the parent kills it inside the transaction that stores it).
* ``slow LEDGER``: one compilation of a large request (the parent kills it while
  it solves).
* ``loop LEDGER SEED``: compilations until killed.
* ``full-disk DIR`` and ``read-only DIR``: run inside a private mount namespace
  (``unshare --mount``); mount a tiny tmpfs or a read-only bind mount at DIR and
  report what recording there does.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import assembler
from assembler.hunt.generate import Shape, generate

EXAMPLES = Path(__file__).resolve().parents[1] / "models" / "examples"


def request(seed: int, forms: int = 12) -> dict[str, Any]:
    """A generated request whose candidates carry content (some of it shared)."""
    req = generate(random.Random(seed), Shape.scale(forms))
    for index, candidate in enumerate(req["candidates"]):
        shared = index % 3 == 0
        candidate["content"] = (
            f"shared material {index}" if shared else f"{candidate['id']} of request {seed}"
        )
    return req


def solve(req: dict[str, Any], ledger: assembler.Ledger, **kw: Any) -> assembler.Result:
    result = assembler.assemble(req, ledger=ledger, **kw)
    assert assembler.verify(req, result) == [], result.to_dict()
    return result


def _ledger(path: str, session: str, lock: str | None = None) -> assembler.Ledger:
    if lock is None:
        return assembler.Ledger(path, session=session)
    from assembler.ledger.postgres import PostgresStore

    return assembler.Ledger(path, session=session, store=PostgresStore(path, lock=lock))


def record(path: str, session: str, count: int, seed: int, lock: str | None) -> dict[str, Any]:
    traces = []
    with _ledger(path, session, lock) as ledger:
        for i in range(count):
            traces.append(solve(request(seed * 100_000 + i), ledger).trace_id)
    return {"traces": traces}


def slow(path: str) -> dict[str, Any]:
    req = generate(random.Random(7), Shape.scale(40_000))
    with assembler.Ledger(path, session="slow") as ledger:
        result = solve(req, ledger, time_limit=60)
    return {"finished": result.status.value}


def huge(url: str) -> dict[str, Any]:
    req = request(3, forms=400)
    for index, candidate in enumerate(req["candidates"]):
        candidate["content"] = f"{index} " + os.urandom(50_000).hex()
    with assembler.Ledger(url, session="huge") as ledger:
        result = solve(req, ledger)
    return {"finished": result.status.value}


def loop(path: str, seed: int) -> dict[str, Any]:
    with assembler.Ledger(path, session=f"loop-{seed}") as ledger:
        for i in range(1_000_000):
            solve(request(seed * 100_000 + i, forms=6), ledger)
    return {}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "assembler", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


def _events(path: str) -> int:
    with assembler.Ledger(path, readonly=True) as ledger:
        return sum(1 for _ in ledger.events())


def _verify(path: str) -> dict[str, Any]:
    done = _cli("ledger", "verify", path, "--json")
    return {"code": done.returncode, **json.loads(done.stdout or "{}"), "stderr": done.stderr}


def full_disk(folder: str) -> dict[str, Any]:
    if not _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", folder):
        return {"skip": "cannot mount a tmpfs here"}
    path = os.path.join(folder, "ledger.db")
    example = str(EXAMPLES / "review-migration.json")
    out: dict[str, Any] = {"first": _cli("compile", example, "--ledger", path).returncode}
    # this process's ledger is open (WAL and shared memory exist) before the disk fills
    ledger = assembler.Ledger(path, session="in-process")
    out["events_before"] = _events(path)
    filler = os.path.join(folder, "filler")
    with open(filler, "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError as exc:
            out["filled"] = exc.strerror
    done = _cli("compile", example, "--ledger", path)
    out["cli"] = {"code": done.returncode, "stderr": done.stderr}
    big = request(11, forms=60)
    for candidate in big["candidates"]:
        candidate["content"] = os.urandom(4000).hex()
    try:
        solve(big, ledger)
        out["api"] = "recorded"
    except assembler.LedgerError as exc:
        out["api"] = {"type": type(exc).__name__, "reason": exc.reason}
    out["events_full"] = _events(path)
    out["verify_full"] = _verify(path)
    os.remove(filler)
    solve(request(12), ledger)
    ledger.close()
    out["events_after"] = _events(path)
    out["verify_after"] = _verify(path)
    return out


def read_only(folder: str) -> dict[str, Any]:
    source, mounted = os.path.join(folder, "source"), os.path.join(folder, "mounted")
    os.makedirs(source)
    os.makedirs(mounted)
    path = os.path.join(source, "ledger.db")
    example = str(EXAMPLES / "review-migration.json")
    out: dict[str, Any] = {"first": _cli("compile", example, "--ledger", path).returncode}
    if not (_mount("--bind", source, mounted) and _mount("-o", "remount,bind,ro", mounted)):
        return {"skip": "cannot make a read-only bind mount here"}
    seen = os.path.join(mounted, "ledger.db")
    done = _cli("compile", example, "--ledger", seen)
    out["mount"] = {"code": done.returncode, "stderr": done.stderr}
    out["mount_verify"] = _verify(seen)
    out["mount_replay"] = _cli("ledger", "replay", seen, "1").returncode
    out["mount_events"] = _events(seen)
    if subprocess.run(["chattr", "+i", path], capture_output=True).returncode == 0:
        try:
            done = _cli("compile", example, "--ledger", path)
            out["immutable"] = {"code": done.returncode, "stderr": done.stderr}
            out["immutable_events"] = _events(path)
        finally:
            subprocess.run(["chattr", "-i", path], check=True)
    return out


def main(argv: list[str]) -> int:
    mode, *rest = argv
    if mode == "record":
        found = record(rest[0], rest[1], int(rest[2]), int(rest[3]), (rest[4:] or [None])[0])
    elif mode == "huge":
        found = huge(rest[0])
    elif mode == "slow":
        found = slow(rest[0])
    elif mode == "loop":
        found = loop(rest[0], int(rest[1]))
    elif mode == "full-disk":
        found = full_disk(rest[0])
    elif mode == "read-only":
        found = read_only(rest[0])
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
