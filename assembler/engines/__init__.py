"""Where batches of examples run: this process, a local pool, or a Dask cluster.

An engine is a small protocol (``base.Engine``): ``map(fn, jobs, stop)`` runs each job
somewhere and hands the results back in job order; ``rerun_jobs()`` says how many
had to run again after a worker was lost; ``close()``. ``open_engine(spec)`` builds
one from an ``EngineSpec``: ``local`` is a ``spawn`` process pool (or, with 1 worker
and where Ctrl-C need not be handled, this process); ``dask`` submits to the
scheduler at ``spec.scheduler``, or to a ``LocalCluster`` of ``spec.workers``
processes. Dask is imported only here, and only when asked for: ``import assembler``
never loads it. The options that name an engine on a command line (``--engine``,
``--workers``, ``--scheduler``) are ``assembler.cli.engines``.
"""

from __future__ import annotations

from .base import Engine, EngineError, EngineKind, EngineSpec, SerialEngine

__all__ = [
    "Engine",
    "EngineError",
    "EngineKind",
    "EngineSpec",
    "SerialEngine",
    "open_engine",
]


def open_engine(spec: EngineSpec, *, in_process: bool = True) -> Engine:
    """Start the engine ``spec`` names. Raises ``EngineError`` when it cannot start.

    One local worker runs in this process unless ``in_process`` is False: a command
    that must survive Ctrl-C cleanly keeps the solves out of its own process (CP-SAT
    took over SIGINT during a solve until its handler was turned off; a worker outside
    the terminal's group still leaves the decision to the parent: ``local.py``)."""
    if spec.kind is EngineKind.DASK:
        try:
            from .dask_engine import DaskEngine
        except ImportError as error:
            raise EngineError(
                f"the dask engine needs dask.distributed ({error}); install it with"
                " python -m pip install 'assembler[dask]'"
            ) from None
        return DaskEngine(spec.workers, spec.scheduler, spec.connect_timeout)
    if spec.workers == 1 and in_process:
        return SerialEngine()
    from .local import PoolEngine

    return PoolEngine(spec.workers)
