"""The engine options of the commands that run batches (``hunt``, ``sweep``,
``corpus run``): ``--engine``, ``--workers``, ``--scheduler``, ``--connect-timeout``.

Input: an ``argparse`` parser (to add them to), then its parsed namespace.
Output: an ``EngineSpec``, or ``ValueError`` with a one-line message for the
command to print as a usage error (exit 2): a bad count, ``--scheduler`` without
``--engine dask``, or ``--engine dask`` where dask.distributed is not installed.
"""

from __future__ import annotations

import argparse
import importlib.util

from ..engines.base import EngineKind, EngineSpec

__all__ = ["add_engine_arguments", "engine_spec"]


def add_engine_arguments(parser: argparse.ArgumentParser, *, default_workers: int | None) -> None:
    """Add the engine options; ``default_workers`` None makes ``--workers`` default to
    None so that a command can tell "not given" (``--resume`` keeps the saved one)."""
    parser.add_argument(
        "--engine",
        choices=[kind.value for kind in EngineKind],
        default=None,
        help="where batches run: local (this machine, the default) or dask (a"
        " dask.distributed cluster; pip install 'assembler[dask]')",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=default_workers,
        metavar="W",
        help="local processes, or the LocalCluster's worker processes when --engine dask"
        " has no --scheduler (default 1)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --engine dask: the address of a running scheduler (tcp://host:8786);"
        " without it a LocalCluster is started",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="with --engine dask: seconds to wait for the scheduler and a first worker"
        " (default 10)",
    )


def engine_spec(args: argparse.Namespace) -> EngineSpec:
    """The ``EngineSpec`` the parsed options name; ``ValueError`` with a clear message."""
    kind = EngineKind(args.engine or EngineKind.LOCAL.value)
    workers = 1 if args.workers is None else args.workers
    if workers < 1:
        raise ValueError("--workers must be at least 1")
    if args.scheduler is not None and kind is not EngineKind.DASK:
        raise ValueError("--scheduler needs --engine dask")
    if args.scheduler is not None and not args.scheduler.strip():
        raise ValueError("--scheduler needs an address such as tcp://127.0.0.1:8786")
    if not 0 < args.connect_timeout < float("inf"):
        raise ValueError("--connect-timeout must be a positive number")
    if kind is EngineKind.DASK and importlib.util.find_spec("distributed") is None:
        raise ValueError(
            "--engine dask needs dask.distributed, which is not installed; install it with"
            " python -m pip install 'assembler[dask]'"
        )
    return EngineSpec(kind, workers, args.scheduler, args.connect_timeout)
