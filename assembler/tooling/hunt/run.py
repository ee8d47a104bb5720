"""Running a hunt: examples in batches, findings merged in index order, then shrunk.

Input: a ``HuntConfig`` (strategy, seed, example count or seconds, candidate cap,
workers, output folder).
Output: a ``HuntReport``; the shrunk cases written to ``config.out``. Example ``i`` of
seed ``s`` is ``generate(random.Random(f"{s}:{i}"), Shape.small(M))``, so a hunt is
deterministic for a seed and example count whatever the worker count. ``replay``
re-runs a saved case.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import random
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...model.errors import InvalidRequest
from ...strategies import STRATEGIES
from ..generate import Shape, generate
from .judge import EXACT, FindingKind, Judgement, judge, judge_safely
from .shrink import RequestDict, shrink

__all__ = [
    "Finding",
    "HuntConfig",
    "HuntReport",
    "ReplayResult",
    "example_request",
    "hunt",
    "load_case",
    "replay",
]

DEFAULT_OUT = Path("corpus/register")
DEFAULT_EXAMPLES = 500
DEFAULT_MAX_CANDIDATES = 10
# findings shrunk and written per kind: shrinking costs ~100x an example, and the
# first few findings of a kind are almost always the same trap
DEFAULT_SHRINK_PER_KIND = 3
BATCH = 8


@dataclass(frozen=True, slots=True)
class Finding:
    """One example where the strategy was wrong, before shrinking."""

    example: int
    kind: FindingKind
    explanation: str
    candidates: int


@dataclass(frozen=True, slots=True)
class HuntConfig:
    """One hunt: ``examples`` (a count) or ``seconds`` (a search time); ``out`` None
    writes nothing."""

    strategy: str
    seed: int = 0
    examples: int | None = DEFAULT_EXAMPLES
    seconds: float | None = None
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    workers: int = 1
    out: Path | None = DEFAULT_OUT
    shrink_per_kind: int = DEFAULT_SHRINK_PER_KIND

    def __post_init__(self) -> None:
        if self.examples is None and self.seconds is None:
            raise ValueError("a hunt needs an example count or a number of seconds")
        if self.examples is not None and self.examples < 0:
            raise ValueError("examples must be 0 or more")
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError("seconds must be positive")
        if self.workers < 1 or self.max_candidates < 1 or self.shrink_per_kind < 0:
            raise ValueError("workers and max_candidates must be >= 1, shrink_per_kind >= 0")


@dataclass(frozen=True, slots=True)
class HuntReport:
    """What a hunt did: examples tried (a prefix 0..examples-1), findings, written cases."""

    strategy: str
    seed: int
    examples: int
    skipped: int
    seconds: float
    shrink_seconds: float
    findings: tuple[Finding, ...]
    cases: tuple[Mapping[str, Any], ...]
    paths: tuple[str, ...]

    def counts(self) -> dict[str, int]:
        counts = Counter(f.kind for f in self.findings)
        return {kind.value: counts.get(kind, 0) for kind in FindingKind}

    @property
    def rate(self) -> float:
        """Examples per second of search (shrinking excluded)."""
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    @property
    def exact_is_wrong(self) -> bool:
        if self.strategy in EXACT:
            return bool(self.findings)
        loud = (FindingKind.EXACT_DISAGREEMENT, FindingKind.CRASH)
        return any(f.kind in loud for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        per_1000 = {
            kind: round(1000 * n / self.examples, 2) if self.examples else 0.0
            for kind, n in self.counts().items()
        }
        return {
            "strategy": self.strategy,
            "seed": self.seed,
            "examples": self.examples,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 3),
            "shrink_seconds": round(self.shrink_seconds, 3),
            "examples_per_second": round(self.rate, 2),
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


def example_request(seed: int, index: int, max_candidates: int) -> RequestDict:
    """Example ``index`` of the hunt seeded ``seed``: the same in every process."""
    return generate(random.Random(f"{seed}:{index}"), Shape.small(max_candidates))


@dataclass(frozen=True, slots=True)
class _Outcome:
    example: int
    kind: FindingKind | None
    explanation: str
    skipped: bool
    candidates: int


def _run_batch(args: tuple[int, Sequence[int], str, int]) -> list[_Outcome]:
    seed, indices, strategy, max_candidates = args
    out = []
    for index in indices:
        request = example_request(seed, index, max_candidates)
        verdict = judge_safely(request, strategy)
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


def _shrink_job(args: tuple[int, int, str, str, int]) -> dict[str, Any]:
    seed, index, strategy, kind_name, max_candidates = args
    kind = FindingKind(kind_name)
    original = example_request(seed, index, max_candidates)
    small = shrink(original, strategy, kind)
    verdict = judge_safely(small, strategy)
    return {
        "kind": kind.value,
        "strategy": strategy,
        "seed": seed,
        "example": index,
        "max_candidates": max_candidates,
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


def _batches(config: HuntConfig) -> Iterator[tuple[int, Sequence[int], str, int]]:
    start = 0
    while config.examples is None or start < config.examples:
        stop = start + BATCH if config.examples is None else min(start + BATCH, config.examples)
        # with both a count and a time, whichever ends first ends the hunt
        yield (config.seed, range(start, stop), config.strategy, config.max_candidates)
        start = stop


def _outcomes(config: HuntConfig, pool: Any, deadline: float | None) -> Iterator[list[_Outcome]]:
    """Batches of outcomes in index order, until the example count or the deadline."""
    jobs = _batches(config)
    if pool is None:
        for job in jobs:
            if deadline is not None and time.monotonic() >= deadline:
                return
            yield _run_batch(job)
        return
    # keep a few batches in flight per worker; results are taken in submission order, so
    # the examples tried are always a prefix 0..n-1 whatever the worker count
    pending: deque[Any] = deque()
    exhausted = False
    while True:
        while not exhausted and len(pending) < 3 * config.workers:
            if deadline is not None and time.monotonic() >= deadline:
                exhausted = True
                break
            next_job = next(jobs, None)
            if next_job is None:
                exhausted = True
                break
            pending.append(pool.apply_async(_run_batch, (next_job,)))
        if not pending:
            return
        yield pending.popleft().get()


def hunt(
    config: HuntConfig, progress: Callable[[int, Counter[FindingKind], float], None] | None = None
) -> HuntReport:
    """Run a hunt. Input: a ``HuntConfig``. Output: a ``HuntReport``; cases written to
    ``config.out`` when it is set. ``progress(examples, counts, elapsed)`` is called
    after every batch."""
    pool = None
    if config.workers > 1:
        # spawn, not fork: the parent may already hold OR-Tools' threads
        pool = multiprocessing.get_context("spawn").Pool(config.workers)
    try:
        started = time.monotonic()
        deadline = None if config.seconds is None else started + config.seconds
        findings: list[Finding] = []
        counts: Counter[FindingKind] = Counter()
        examples = skipped = 0
        for batch in _outcomes(config, pool, deadline):
            for outcome in batch:
                examples += 1
                skipped += outcome.skipped
                if outcome.kind is not None:
                    counts[outcome.kind] += 1
                    findings.append(
                        Finding(
                            outcome.example, outcome.kind, outcome.explanation, outcome.candidates
                        )
                    )
            if progress is not None:
                progress(examples, counts, time.monotonic() - started)
        searched = time.monotonic() - started

        shrink_started = time.monotonic()
        chosen: list[Finding] = []
        per_kind: Counter[FindingKind] = Counter()
        for finding in findings:
            if per_kind[finding.kind] < config.shrink_per_kind:
                per_kind[finding.kind] += 1
                chosen.append(finding)
        jobs = [
            (config.seed, f.example, config.strategy, f.kind.value, config.max_candidates)
            for f in chosen
        ]
        shrunk = pool.map(_shrink_job, jobs) if pool is not None else [_shrink_job(j) for j in jobs]
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()

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
    return HuntReport(
        strategy=config.strategy,
        seed=config.seed,
        examples=examples,
        skipped=skipped,
        seconds=searched,
        shrink_seconds=time.monotonic() - shrink_started,
        findings=tuple(findings),
        cases=tuple(cases),
        paths=tuple(paths),
    )


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
    try:
        return ReplayResult(expected, judge(request, strategy))
    except InvalidRequest:
        raise
    except Exception:
        return ReplayResult(expected, judge_safely(request, strategy))


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
