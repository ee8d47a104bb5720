"""Hunts on every engine (assembler.engines, issue 15), on real Dask clusters.

The same seed and example count give the same answer (findings in order, shrunk
cases, summary) in this process, on a local pool and on a Dask ``LocalCluster`` of 1
and 2 workers, and on a cluster of real ``dask scheduler`` / ``dask worker``
processes reached by its address; a worker killed mid-hunt costs only the batches it
held and the answer is unchanged; a hunt stopped by Ctrl-C writes its findings,
says how far it got, and ``--resume`` finishes it with the uninterrupted answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assembler.cli.hunt import main
from assembler.engines import EngineError, EngineKind, EngineSpec, open_engine
from assembler.engines.base import IN_FLIGHT_PER_WORKER
from assembler.engines.dask_engine import DaskEngine
from assembler.exits import EXIT_ENGINE
from assembler.hunt import HuntConfig, HuntReport, hunt
from assembler.hunt.run import Progress

SEED = 7
EXAMPLES = 240


def _config(out: Path | None, **changes: Any) -> HuntConfig:
    return HuntConfig(
        strategy="greedy",
        seed=SEED,
        examples=changes.pop("examples", EXAMPLES),
        out=out,
        shrink_per_kind=1,
        **changes,
    )


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # every run writes its cases to the same folder, so that their paths compare equal
    return tmp_path_factory.mktemp("cases")


@pytest.fixture(scope="module")
def reference(out: Path) -> HuntReport:
    report = hunt(_config(out))
    assert report.counts()["false-refusal"] >= 1 and report.cases
    return report


def test_a_local_pool_gives_the_same_answer(reference: HuntReport, out: Path) -> None:
    report = hunt(_config(out, workers=2, batch=5))
    assert report.answer() == reference.answer()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_dask_local_cluster_gives_the_same_answer(
    reference: HuntReport, out: Path, workers: int
) -> None:
    with open_engine(EngineSpec(EngineKind.DASK, workers)) as engine:
        assert engine.workers == workers
        # small batches: many more tasks than workers, finishing out of order
        report = hunt(_config(out, batch=16), engine=engine)
    assert report.answer() == reference.answer()
    assert report.engine.startswith("dask, LocalCluster")


def test_a_killed_worker_costs_only_its_batch(reference: HuntReport, out: Path) -> None:
    killed: dict[str, Any] = {}
    with DaskEngine(workers=2) as engine:
        pids = engine.client.run(os.getpid)

        def kill_a_busy_worker(progress: Progress) -> None:
            if killed or progress.examples < 64:
                return
            for address, keys in engine.client.processing().items():
                if keys:
                    killed.update(address=address, keys=set(keys))
                    os.kill(pids[address], signal.SIGKILL)
                    return

        report = hunt(_config(out, batch=16), kill_a_busy_worker, engine=engine)
        rerun = engine.rerun_jobs()
    assert killed, "no worker was busy"
    assert report.answer() == reference.answer()
    # the batches the dead worker held ran again, and only those: no more than the
    # engine keeps in flight (the scheduler may queue several on one worker under load:
    # 3 were seen in a CI run), never the whole hunt's 15
    assert 1 <= rerun <= IN_FLIGHT_PER_WORKER * 2, rerun
    assert report.rerun_batches == rerun


def test_a_failing_batch_is_an_engine_error() -> None:
    with open_engine(EngineSpec(EngineKind.DASK, 1)) as engine:
        assert list(engine.map(abs, [-1, 2, -3])) == [1, 2, 3]
        with pytest.raises(EngineError, match="retries"):
            list(engine.map(abs, ["not a number"]))


def test_a_dead_local_worker_stops_the_run_with_an_engine_error() -> None:
    # The local pool does not re-run batches; a worker killed outright must end the run
    # with a clear error, not leave it waiting for a result that never comes.
    from tests_support import dies_on_job_three

    with open_engine(EngineSpec(EngineKind.LOCAL, 2)) as engine:
        assert list(engine.map(dies_on_job_three, [0, 1, 2])) == [0, 1, 4]
        with pytest.raises(EngineError, match="died") as raised:
            list(engine.map(dies_on_job_three, range(8)))
        assert "\n" not in str(raised.value) and "--engine dask" in str(raised.value)


def test_a_failing_local_batch_is_an_engine_error() -> None:
    with open_engine(EngineSpec(EngineKind.LOCAL, 2)) as engine:
        assert list(engine.map(abs, [-1, 2, -3])) == [1, 2, 3]
        with pytest.raises(EngineError, match="a batch failed: TypeError"):
            list(engine.map(abs, ["not a number"]))


# -- a scheduler at an address: real `dask scheduler` and `dask worker` processes --------


@pytest.fixture
def scheduler_address(tmp_path: Path) -> Iterator[str]:
    file = tmp_path / "scheduler.json"
    logs = (tmp_path / "scheduler.log").open("w"), (tmp_path / "worker.log").open("w")
    dask = [sys.executable, "-m", "dask"]
    processes = [
        subprocess.Popen(
            [
                *dask,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(file),
            ],
            stdout=logs[0],
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not file.exists() or not file.read_text():
            assert time.monotonic() < deadline, "the scheduler did not start"
            assert processes[0].poll() is None, "the scheduler exited"
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        processes.append(
            subprocess.Popen(
                [
                    *dask,
                    "worker",
                    address,
                    "--nworkers",
                    "2",
                    "--nthreads",
                    "1",
                    "--host",
                    "127.0.0.1",
                    "--no-dashboard",
                ],
                stdout=logs[1],
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        yield str(address)
    finally:
        # each was started in a session of its own: end that process group (the worker
        # command's nanny and worker processes), a graceful close is only slower
        for process in reversed(processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        for log in logs:
            log.close()


def test_a_scheduler_address_gives_the_same_answer(
    reference: HuntReport, out: Path, scheduler_address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--against", "greedy", "--seed", str(SEED), "--examples", str(EXAMPLES)]
    argv += ["--shrink", "1", "--out", str(out), "--json", "--engine", "dask"]
    argv += ["--scheduler", scheduler_address, "--connect-timeout", "60"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["engine"].startswith(f"dask, scheduler {scheduler_address}")
    assert {key: data[key] for key in reference.answer()} == reference.answer()


def test_an_unreachable_scheduler_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--against", "greedy", "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"]
    assert main([*argv, "--connect-timeout", "1"]) == EXIT_ENGINE
    err = capsys.readouterr().err
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err
    assert "Traceback" not in err and err.count("\n") == 1


# -- Ctrl-C and --resume ------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["dask", "local"])
def test_ctrl_c_writes_the_findings_and_resume_finishes_the_hunt(
    reference: HuntReport, out: Path, tmp_path: Path, engine: str
) -> None:
    state = tmp_path / "state"
    argv = ["--against", "greedy", "--seed", str(SEED), "--examples", str(EXAMPLES)]
    argv += ["--shrink", "1", "--out", str(out), "--state", str(state), "--batch", "8"]
    argv += ["--engine", engine, "--workers", "2", "--progress", "0.1"]
    hunt_process = subprocess.Popen(
        [sys.executable, "-m", "assembler", "hunt", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert hunt_process.stderr is not None
    try:
        # progress lines arrive on a pipe (not a terminal) because --progress asks for them
        line = hunt_process.stderr.readline()
        assert line.startswith("hunt: "), line
        # what a terminal's Ctrl-C does: SIGINT to the whole process group
        os.killpg(hunt_process.pid, signal.SIGINT)
        stdout, stderr = hunt_process.communicate(timeout=120)
    finally:
        if hunt_process.poll() is None:
            hunt_process.kill()
    assert hunt_process.returncode == 130, stderr
    assert "Traceback" not in stderr
    saved = json.loads((state / "findings.json").read_text())
    done = saved["examples"]
    assert 0 < done < EXAMPLES, "the hunt ended before it was interrupted"
    assert saved["complete"] is False
    assert f"interrupted after {done:,} of {EXAMPLES:,} examples" in stderr
    assert f"--resume {state}" in stderr
    assert saved["found"] == [f for f in reference.answer()["found"] if f["example"] < done]
    assert json.loads(stdout)["examples"] == done if stdout.startswith("{") else True

    resumed = subprocess.run(
        [sys.executable, "-m", "assembler", "hunt", "--resume", str(state), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout)
    assert final["resumed_from"] == done
    assert {key: final[key] for key in reference.answer()} == reference.answer()
    assert json.loads((state / "findings.json").read_text())["complete"] is True


def test_import_assembler_loads_no_dask() -> None:
    code = (
        "import sys, assembler, assembler.hunt, assembler.sweep;"
        "loaded = [m for m in ('dask', 'distributed') if m in sys.modules];"
        "print(','.join(loaded))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
