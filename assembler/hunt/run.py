"""Running a hunt: examples in batches, findings merged in index order, then shrunk.

Input: a ``HuntConfig`` (strategy, seed, example count or seconds, candidate cap,
workers, output folder).
Output: a ``HuntReport``; the shrunk cases written to ``config.out``. Example ``i`` of
seed ``s`` is ``generate(random.Random(f"{s}:{i}"), Shape.small(M))``, so a hunt is
deterministic for a seed and example count whatever the engine and its worker count:
batches go to an ``Engine`` (this process, a local pool, a Dask cluster) which hands
them back in order, and findings are merged by index. A journal in a state folder
lets a stopped hunt continue (``state.py``). ``replay`` re-runs a saved case.

With ``cache`` set, example ``i`` is ``sessions.session_example(s, i, M)`` instead: a
next call whose ``cache.previous`` is the rendering of the call before, judged by the
cache-aware order (``judge.py``). With ``shape`` ``session``, the same examples judged as
a session's answers after deltas against fresh calls (``sessionjudge.py``); with
``shape`` ``render``, example ``i`` is ``conversations.conversation`` drawn from
``random.Random(f"{s}:render:{i}")`` (turns that may open a conversation, calls with bad
arguments, a cache section in any order), judged in every format under its rules.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engines import Engine, EngineError, EngineSpec, open_engine
from ..engines.base import never
from ..model.errors import InvalidRequest
from ..strategies import STRATEGIES
from .cachesessions import session_example
from .conversations import conversation
from .generate import Shape, seeded_example
from .journal import HuntState, Journal
from .judge import EXACT, Finding, FindingKind, Judgement, judge_in, judge_safely
from .shrink import RequestDict, shrink

__all__ = [
    "Finding",
    "HuntConfig",
    "HuntReport",
    "Progress",
    "ReplayResult",
    "example_request",
    "hunt",
    "load_case",
    "replay",
    "settings",
]

# a folder of its own in the current directory: never the corpus a clone ships
DEFAULT_OUT = Path("hunt-findings")
DEFAULT_EXAMPLES = 500
DEFAULT_MAX_CANDIDATES = 10
# findings shrunk and written per kind: shrinking costs far more than an example, and
# the first few findings of a kind are almost always the same trap
DEFAULT_SHRINK_PER_KIND = 3
# the hunts' shapes beside the generated requests and the cache hunt's (``HuntConfig.shape``)
SHAPES = ("", "render", "session")


@dataclass(frozen=True, slots=True)
class HuntConfig:
    """One hunt: ``examples`` (a count) or ``seconds`` (a search time); ``out`` None
    writes nothing. ``workers`` are local processes when ``hunt`` is given no engine;
    ``batch`` (examples per job, None: the engine's default) and the engine change how
    fast the answer comes, never the answer."""

    strategy: str
    seed: int = 0
    examples: int | None = DEFAULT_EXAMPLES
    seconds: float | None = None
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    workers: int = 1
    out: Path | None = DEFAULT_OUT
    shrink_per_kind: int = DEFAULT_SHRINK_PER_KIND
    batch: int | None = None
    # draw sessions (a call, its rendering, the next call caching on it) instead
    cache: bool = False
    # "render": conversations judged in every format; "session": the cache examples
    # judged as a session's answers against fresh calls; "": the generated requests
    shape: str = ""

    @property
    def mode(self) -> str:
        """What the examples are and how they are judged: ``cache``, ``render``,
        ``session`` or "" (the generated requests)."""
        return "cache" if self.cache else self.shape

    def __post_init__(self) -> None:
        if self.shape not in SHAPES or (self.cache and self.shape):
            raise ValueError(f"shape must be one of {SHAPES}, and not with cache")
        if self.examples is None and self.seconds is None:
            raise ValueError("a hunt needs an example count or a number of seconds")
        if self.examples is not None and self.examples < 0:
            raise ValueError("examples must be 0 or more")
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError("seconds must be positive")
        if self.workers < 1 or self.max_candidates < 1 or self.shrink_per_kind < 0:
            raise ValueError("workers and max_candidates must be >= 1, shrink_per_kind >= 0")
        if self.batch is not None and self.batch < 1:
            raise ValueError("batch must be at least 1")


@dataclass(frozen=True, slots=True)
class HuntReport:
    """What a hunt did: examples tried (a prefix 0..examples-1), findings, written cases.

    ``answer()`` is the part that must be identical on every engine and worker count;
    the rest (times, engine, batches re-run after a lost worker) describes the run.
    ``complete`` is False when the hunt was stopped before its end (nothing shrunk).
    """

    strategy: str
    seed: int
    examples: int
    skipped: int
    seconds: float
    shrink_seconds: float
    findings: tuple[Finding, ...]
    cases: tuple[Mapping[str, Any], ...]
    paths: tuple[str, ...]
    target: int | None = None
    resumed_from: int = 0
    engine: str = "local, 1 process"
    rerun_batches: int = 0
    complete: bool = True
    cache: bool = False
    shape: str = ""

    def counts(self) -> dict[str, int]:
        counts = Counter(f.kind for f in self.findings)
        return {kind.value: counts.get(kind, 0) for kind in FindingKind}

    @property
    def rate(self) -> float:
        """Examples per second of search in this run (shrinking excluded)."""
        new = self.examples - self.resumed_from
        return new / self.seconds if self.seconds > 0 else 0.0

    @property
    def exact_is_wrong(self) -> bool:
        if self.strategy in EXACT:
            return bool(self.findings)
        loud = (FindingKind.EXACT_DISAGREEMENT, FindingKind.CRASH)
        return any(f.kind in loud for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.answer(),
            "complete": self.complete,
            "target": self.target,
            "resumed_from": self.resumed_from,
            "seconds": round(self.seconds, 3),
            "shrink_seconds": round(self.shrink_seconds, 3),
            "examples_per_second": round(self.rate, 2),
            "engine": self.engine,
            "rerun_batches": self.rerun_batches,
        }

    def answer(self) -> dict[str, Any]:
        """Strategy, seed, examples, skipped, findings by kind and in order, saved cases:
        the same for a seed and example count on any engine."""
        per_1000 = {
            kind: round(1000 * n / self.examples, 2) if self.examples else 0.0
            for kind, n in self.counts().items()
        }
        return {
            "strategy": self.strategy,
            "seed": self.seed,
            "cache": self.cache,
            "shape": self.shape,
            "examples": self.examples,
            "skipped": self.skipped,
            "findings": self.counts(),
            "per_1000": per_1000,
            "found": [
                {"example": f.example, "kind": f.kind.value, "explanation": f.explanation}
                for f in self.findings
            ],
            "cases": [
                {
                    "path": path,
                    "kind": case["kind"],
                    "example": case["example"],
                    "candidates": len(case["request"]["candidates"]),
                    "candidates_before": case["shrunk_from"],
                    "explanation": case["explanation"],
                }
                for path, case in zip(self.paths, self.cases, strict=True)
            ],
        }


def example_request(
    seed: int, index: int, max_candidates: int, *, cache: bool = False, shape: str = ""
) -> RequestDict:
    """Example ``index`` of the hunt seeded ``seed`` (``cache``: of the cache hunt, and
    of the session hunt; ``shape`` ``render``: of the render-rule hunt): the same in
    every process."""
    if cache or shape == "session":
        return session_example(seed, index, max_candidates)
    if shape == "render":
        return conversation(random.Random(f"{seed}:render:{index}"), max(2, max_candidates))
    return seeded_example(seed, index, Shape.small(max_candidates))


def _example(seed: int, index: int, max_candidates: int, mode: str) -> RequestDict:
    shape = "" if mode == "cache" else mode
    return example_request(seed, index, max_candidates, cache=mode == "cache", shape=shape)


def _shape(mode: str) -> str:
    """The judge's shape of a mode (a cache example is judged as any request)."""
    return "" if mode == "cache" else mode


@dataclass(frozen=True, slots=True)
class _Outcome:
    example: int
    kind: FindingKind | None
    explanation: str
    skipped: bool
    candidates: int


def _run_batch(args: tuple[int, Sequence[int], str, int, str]) -> list[_Outcome]:
    seed, indices, strategy, max_candidates, mode = args
    out = []
    for index in indices:
        request = _example(seed, index, max_candidates, mode)
        verdict = judge_safely(request, strategy, _shape(mode))
        out.append(
            _Outcome(
                index,
                verdict.kind,
                verdict.explanation,
                verdict.skipped,
                len(request["candidates"]),
            )
        )
    return out


def _shrink_job(args: tuple[int, int, str, str, int, str]) -> dict[str, Any]:
    seed, index, strategy, kind_name, max_candidates, mode = args
    kind = FindingKind(kind_name)
    original = _example(seed, index, max_candidates, mode)
    small = shrink(original, strategy, kind, shape=_shape(mode))
    verdict = judge_safely(small, strategy, _shape(mode))
    return {
        "kind": kind.value,
        "strategy": strategy,
        "seed": seed,
        "example": index,
        "max_candidates": max_candidates,
        "cache": mode == "cache",
        "shape": _shape(mode),
        "explanation": verdict.explanation,
        "shrunk_from": len(original["candidates"]),
        "request": small,
        "answers": dict(verdict.answers),
    }


def _case_name(case: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(
        json.dumps(case["request"], sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    return f"{case['strategy']}-{case['kind']}-{digest[:10]}.json"


def _jobs(
    config: HuntConfig, start: int, batch: int, deadline: float | None
) -> Iterator[tuple[int, Sequence[int], str, int, str]]:
    """Batches of example indices from ``start``; with a deadline, none is started after
    it (the ones in flight still finish, so the examples tried stay a prefix)."""
    while config.examples is None or start < config.examples:
        if deadline is not None and time.monotonic() >= deadline:
            return
        stop = start + batch if config.examples is None else min(start + batch, config.examples)
        yield (
            config.seed,
            range(start, stop),
            config.strategy,
            config.max_candidates,
            config.mode,
        )
        start = stop


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a running hunt is: examples 0..examples-1 judged, ``new`` of them in this
    run (the rest came from a resumed journal), of ``target`` (None: until the time)."""

    examples: int
    new: int
    target: int | None
    counts: Mapping[FindingKind, int]
    elapsed: float

    @property
    def rate(self) -> float:
        return self.new / self.elapsed if self.elapsed > 0 else 0.0


def settings(config: HuntConfig) -> dict[str, Any]:
    """What a state directory keeps of a config: everything that decides the answer,
    and the local worker count (which does not: a resumed hunt keeps it unless told)."""
    return {
        "workers": config.workers,
        "strategy": config.strategy,
        "seed": config.seed,
        "examples": config.examples,
        "seconds": config.seconds,
        "max_candidates": config.max_candidates,
        "shrink_per_kind": config.shrink_per_kind,
        "out": None if config.out is None else str(config.out),
        "batch": config.batch,
        "cache": config.cache,
        "shape": config.shape,
    }


def hunt(
    config: HuntConfig,
    progress: Callable[[Progress], None] | None = None,
    *,
    engine: Engine | None = None,
    stop: Callable[[], bool] = never,
    state: Path | None = None,
    resume: Journal | None = None,
) -> HuntReport:
    """Run a hunt. Input: a ``HuntConfig``. Output: a ``HuntReport``; cases written to
    ``config.out`` when it is set.

    ``engine`` runs the batches (default: ``config.workers`` local processes; the
    caller closes an engine it passes). ``progress`` is called after every merged
    batch. Once ``stop()`` is true the hunt ends after the batches already finished,
    skips shrinking and reports ``complete`` False. ``state`` keeps a journal there
    (``state.py``) and ends with ``findings.json``; ``resume`` (a journal read from it)
    continues after the examples it holds. ``EngineError`` propagates once the
    findings so far are written.
    """
    owned = engine is None
    if engine is None:
        engine = open_engine(EngineSpec(workers=config.workers))
    journal: HuntState | None = None
    if state is not None:
        journal = (
            HuntState.append_to(state)
            if resume is not None
            else HuntState.create(state, settings(config))
        )
    try:
        return _hunt(config, engine, progress, stop, journal, resume)
    finally:
        if owned:
            engine.close()


def _hunt(
    config: HuntConfig,
    engine: Engine,
    progress: Callable[[Progress], None] | None,
    stop: Callable[[], bool],
    journal: HuntState | None,
    resume: Journal | None,
) -> HuntReport:
    started = time.monotonic()
    deadline = None if config.seconds is None else started + config.seconds
    findings: list[Finding] = list(resume.findings) if resume is not None else []
    counts: Counter[FindingKind] = Counter(f.kind for f in findings)
    first = examples = resume.done if resume is not None else 0
    skipped = resume.skipped if resume is not None else 0
    batch = config.batch or engine.default_batch
    partial = _Partial(config, engine, first, started)
    try:
        for outcomes in engine.map(_run_batch, _jobs(config, first, batch, deadline), stop):
            found = [
                Finding(o.example, o.kind, o.explanation, o.candidates)
                for o in outcomes
                if o.kind is not None
            ]
            lost = sum(o.skipped for o in outcomes)
            if journal is not None and outcomes:
                journal.record(outcomes[0].example, outcomes[-1].example + 1, lost, found)
            examples += len(outcomes)
            skipped += lost
            findings.extend(found)
            counts.update(f.kind for f in found)
            if progress is not None:
                elapsed = time.monotonic() - started
                progress(Progress(examples, examples - first, config.examples, counts, elapsed))
        searched = time.monotonic() - started
        if stop():
            return partial.report(examples, skipped, findings, searched, journal)

        shrink_started = time.monotonic()
        chosen: list[Finding] = []
        per_kind: Counter[FindingKind] = Counter()
        for finding in findings:
            if per_kind[finding.kind] < config.shrink_per_kind:
                per_kind[finding.kind] += 1
                chosen.append(finding)
        jobs = [
            (
                config.seed,
                f.example,
                config.strategy,
                f.kind.value,
                config.max_candidates,
                config.mode,
            )
            for f in chosen
        ]
        shrunk = list(engine.map(_shrink_job, jobs, stop))
        if len(shrunk) < len(jobs):
            return partial.report(examples, skipped, findings, searched, journal)
    except EngineError:
        partial.report(examples, skipped, findings, time.monotonic() - started, journal)
        raise

    # several findings often shrink to the same case: keep one file per distinct request
    cases: list[dict[str, Any]] = []
    paths: list[str] = []
    for case in shrunk:
        name = _case_name(case)
        path = name if config.out is None else str(config.out / name)
        if path in paths:
            continue
        cases.append(case)
        paths.append(path)
        if config.out is not None:
            config.out.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(json.dumps(case, indent=2) + "\n", encoding="utf-8")
    report = HuntReport(
        strategy=config.strategy,
        seed=config.seed,
        examples=examples,
        skipped=skipped,
        seconds=searched,
        shrink_seconds=time.monotonic() - shrink_started,
        findings=tuple(findings),
        cases=tuple(cases),
        paths=tuple(paths),
        target=config.examples,
        resumed_from=first,
        engine=engine.description,
        rerun_batches=engine.rerun_jobs(),
        cache=config.cache,
        shape=config.shape,
    )
    if journal is not None:
        journal.finish(report.to_dict())
    return report


@dataclass(frozen=True, slots=True)
class _Partial:
    """Builds the report of a hunt that stopped early (interrupted, or its engine
    failed): the prefix judged so far, nothing shrunk, ``complete`` False."""

    config: HuntConfig
    engine: Engine
    first: int
    started: float

    def report(
        self,
        examples: int,
        skipped: int,
        findings: Sequence[Finding],
        searched: float,
        journal: HuntState | None,
    ) -> HuntReport:
        try:
            rerun = self.engine.rerun_jobs()
        except Exception:
            rerun = 0  # a failed engine may not answer any more
        report = HuntReport(
            strategy=self.config.strategy,
            seed=self.config.seed,
            examples=examples,
            skipped=skipped,
            seconds=searched,
            shrink_seconds=0.0,
            findings=tuple(findings),
            cases=(),
            paths=(),
            target=self.config.examples,
            resumed_from=self.first,
            engine=self.engine.description,
            rerun_batches=rerun,
            complete=False,
            cache=self.config.cache,
            shape=self.config.shape,
        )
        if journal is not None:
            journal.finish(report.to_dict())
        return report


@dataclass(frozen=True, slots=True)
class ReplayResult:
    expected: FindingKind
    judgement: Judgement

    @property
    def reproduced(self) -> bool:
        return self.judgement.kind is self.expected


def replay(case: Mapping[str, Any]) -> ReplayResult:
    """Re-run a saved case. Input: the case dict (as written by a hunt). Output: whether
    its kind reproduces, with the new judgement. Raises ``InvalidRequest`` when the
    saved request is not valid input."""
    expected = FindingKind(case["kind"])
    request, strategy = case["request"], str(case["strategy"])
    shape = str(case.get("shape", ""))
    try:
        return ReplayResult(expected, judge_in(request, strategy, shape))
    except InvalidRequest:
        raise
    except Exception:
        return ReplayResult(expected, judge_safely(request, strategy, shape))


def load_case(path: Path) -> dict[str, Any]:
    """Read and check a saved case; raises ``ValueError`` with a clear message."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a saved case is a JSON object")
    for key in ("kind", "strategy", "request"):
        if key not in data:
            raise ValueError(f"{path}: a saved case needs {key!r}")
    if data["kind"] not in {k.value for k in FindingKind}:
        raise ValueError(f"{path}: unknown kind {data['kind']!r}")
    if data["strategy"] not in STRATEGIES:
        raise ValueError(f"{path}: unknown strategy {data['strategy']!r}")
    if not isinstance(data["request"], dict):
        raise ValueError(f"{path}: 'request' must be a JSON object")
    return data
