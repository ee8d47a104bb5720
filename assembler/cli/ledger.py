"""``assembler ledger <list|show|replay|diff|verify|export|copy|cache> LEDGER ...``: read a
ledger.

Input: the arguments after ``ledger``. Output: text (or JSON with ``--json``) on
stdout and an exit code: 0 done (replay identical, verify clean), 1 a replay differs
or has nothing to compare with, or verify found a problem, 2 bad input (a missing or
foreign ledger file, an unknown compilation id, a usage error) with one line on
stderr and no traceback.

Every subcommand opens the ledger read-only: reading appends nothing. ``replay`` runs
the recorded request with the current code and never writes what it finds. ``copy
SRC DST`` writes SRC's events and artifacts, as they are, into DST (the only ledger a
subcommand writes). A ledger is a file or an address: ``postgresql://...``,
``sqlite:///PATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..exits import EXIT_INVALID, EXIT_OK, EXIT_PROBLEM
from ..ledger import Compilation, CompilationOutcome, Ledger, LedgerError
from ..model.arguments import DEFAULT_TIME_LIMIT
from ..model.errors import AssemblerError
from ..model.keys import shown as shown_key
from ..model.rules import printable
from .arguments import CommandParser

__all__ = ["ledger_command"]


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="assembler ledger", description="Read a ledger of compilations.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=CommandParser)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.add_argument(
            "ledger",
            help="the ledger (written by compile --ledger): a file, sqlite:///PATH or"
            " postgresql://USER@HOST:PORT/DATABASE",
        )
        return sub

    listing = command("list", "list the compilations, oldest first")
    listing.add_argument("--session", help="only this session's compilations")
    listing.add_argument("--json", action="store_true", help="one JSON object per compilation")
    show = command("show", "print one compilation like compile --format text, with its outcome")
    show.add_argument("id", help="a compilation number (see list), or 'last'")
    show.add_argument("--json", action="store_true", help="the whole record as JSON")
    show.add_argument(
        "--rendered",
        action="store_true",
        help="write the rendered text's bytes exactly as they were prepared",
    )
    show.add_argument("--body", action="store_true",
                      help="write the provider body (canonical JSON) as prepared")  # fmt: skip
    replay = command("replay", "re-run a recorded request with the current code and compare")
    replay.add_argument("id", help="a compilation number (see list), or 'last'")
    replay.add_argument("--json", action="store_true", help="the comparison as JSON")
    diff = command("diff", "what changed between two compilations (default A: the previous"
                   " one of B's session)")  # fmt: skip
    diff.add_argument("ids", nargs="+", metavar="ID", help="A B, or B alone")
    diff.add_argument("--json", action="store_true", help="the differences as JSON")
    verify = command("verify", "check the hash chain and every stored artifact")
    verify.add_argument("--json", action="store_true", help="the checks and faults as JSON")
    usage = command("cache", "predicted against billed: each sent body's cache hits and misses,"
                    " and where a miss's bytes diverged from the previous body's")  # fmt: skip
    usage.add_argument("--session", help="only this session's bodies")
    usage.add_argument("--json", action="store_true", help="the report as JSON")
    export = command("export", "write every event (and its artifacts) as JSON lines")
    export.add_argument("--out", help="a file to write (default: stdout)")
    export.add_argument("--no-artifacts", action="store_true", help="events only")
    copy = command("copy", "copy every event and artifact, as they are, into another ledger")
    copy.add_argument(
        "target", help="the ledger to write (empty, or holding a first part of this one)"
    )
    return parser


def ledger_command(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        with Ledger(args.ledger, readonly=True) as ledger:
            return int(_COMMANDS[args.command](ledger, args))
    except (LedgerError, AssemblerError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except BrokenPipeError:
        raise  # the reader of stdout left (``| head``): not a ledger problem
    except OSError as exc:
        print(f"error: {exc.filename or args.ledger}: {exc.strerror}", file=sys.stderr)
        return EXIT_INVALID


def _json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _short(digest: str | None) -> str:
    return "-" if digest is None else digest[:12]


def _list(ledger: Ledger, args: argparse.Namespace) -> int:
    rows = [s for s in ledger.summaries() if args.session is None or s.session == args.session]
    if args.json:
        _json([{**_asdict(s), "outcome": s.outcome.value} for s in rows])
        return EXIT_OK
    lines = [f"{'#':>6}  {'session':<24} {'requested':<27} {'outcome':<11} {'status':<9}"
             f" {'offered':>7} {'sel':>4} {'cost/budget':>13}  package"]  # fmt: skip
    for s in rows:
        spent = "-" if s.cost is None else f"{s.cost}/{s.budget}"
        lines.append(
            f"{s.number:>6}  {_shown(s.session)[:24]:<24} {s.requested_at:<27}"
            f" {s.outcome.value:<11}"
            f" {s.status or '-':<9} {_dash(s.candidates):>7} {_dash(s.selected):>4}"
            f" {spent:>13}  {_short(s.package_id)}"
        )
        if s.error:
            lines.append(f"{'':>8}{printable(s.error)}")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _session(session: str | None) -> str:
    return "-" if session is None else f"'{shown_key(session)}'"


def _shown(session: str | None) -> str:
    """A session as ``list`` prints it: as it is when it keeps the rule of keys, else
    marked and escaped (``model.keys.shown``: no two sessions print alike)."""
    return "-" if session is None else shown_key(session)


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _asdict(value: Any) -> dict[str, Any]:
    return {name: getattr(value, name) for name in value.__slots__}


def _setting(value: Any, default: str) -> str:
    return f"{default} (default)" if value is None else str(value)


def _show(ledger: Ledger, args: argparse.Namespace) -> int:
    from ..ledger.documents import result_from_dict
    from .table import render_text

    record = ledger.compilation(ledger.resolve(args.id))
    if args.rendered or args.body:
        if record.rendering is None:
            print(f"error: compilation {record.number} was not rendered", file=sys.stderr)
            return EXIT_INVALID
        sys.stdout.flush()
        sys.stdout.buffer.write(record.rendering.data if args.rendered else record.rendering.body)
        return EXIT_OK
    if args.json:
        _json(_record_dict(record))
        return EXIT_OK
    run = record.run
    limit = _setting(run["time_limit"], f"{DEFAULT_TIME_LIMIT:g} s")
    lines = [
        f"compilation {record.number}, session {_session(record.session)}: {record.outcome.value}",
        f"requested {record.requested_at}"
        + (f", answered {record.finished_at}" if record.finished_at else ""),
        f"strategy {run['strategy']}, time limit {limit}, workers"
        f" {_setting(run['workers'], '1')}; recorded by assembler {record.version}",
    ]
    if record.request is not None:
        lines.append(f"offered {len(record.request['candidates'])} candidates")
    if record.rendering is not None:
        r = record.rendering
        lines.append(
            f"rendered {r.format}: {len(r.data)} bytes prepared, sha256"
            f" {r.manifest['rendered_sha256']} (show --rendered; --body for the provider body)"
        )
    from ..ledger.diff import compilation_cache

    cache = compilation_cache(record)
    if cache is not None:
        lines += cache.lines()
    if record.outcome is CompilationOutcome.INTERRUPTED:
        lines.append(
            "no outcome was recorded: the process ended during the compilation (interrupted;"
            " this is not a success)"
        )
    elif record.outcome is CompilationOutcome.ABANDONED:
        why = (record.events[1].data().get("reason") if len(record.events) > 1 else None) or "-"
        lines.append(
            f"abandoned ({why}): this answer was made but not given to its caller (its call"
            " was answered otherwise, or another call moved its session first); it moved"
            " nothing on"
        )
    elif record.outcome is CompilationOutcome.FAILED:
        error = record.error or {}
        lines.append(f"failed: {error.get('type')}: {error.get('message')}")
        for name, value in error.get("fields", {}).items():
            lines.append(f"  {name}: {json.dumps(value, ensure_ascii=False)}")
    sys.stdout.write("\n".join(lines) + "\n")
    if record.result is not None:
        sys.stdout.write("\n" + render_text(result_from_dict(record.result)))
    return EXIT_OK


def _record_dict(record: Compilation) -> dict[str, Any]:
    from ..ledger.diff import compilation_cache

    cache = compilation_cache(record)
    return {
        "compilation": record.number,
        "session": record.session,
        "outcome": record.outcome.value,
        "requested_at": record.requested_at,
        "finished_at": record.finished_at,
        "run": dict(record.run),
        "version": record.version,
        "request": record.request,
        "raw_request": record.raw_request,
        "result": record.result,
        "error": record.error,
        "rendering": None
        if record.rendering is None
        else {"size": len(record.rendering.data), **record.rendering.to_dict()},
        "events": [event.to_dict() for event in record.events],
        "cache": None if cache is None else cache.to_dict(),
    }


def _replay(ledger: Ledger, args: argparse.Namespace) -> int:
    from ..ledger.replay import replay

    found = replay(ledger.compilation(ledger.resolve(args.id)), path=ledger.path)
    if args.json:
        _json(found.to_dict())
    else:
        head = f"replay {found.number}: recorded {found.recorded.value}, now {found.now}"
        if found.identical:
            ids = "" if found.result is None else (
                f"; package {_short(found.result['package_id'])},"
                f" trace {_short(found.result['trace_id'])}"
            )  # fmt: skip
            lines = [f"{head}: identical{ids}"]
        elif found.recorded is CompilationOutcome.INTERRUPTED:
            lines = [f"{head}: nothing to compare"]
        else:
            lines = [f"{head}: DIFFERS in {len(found.differences)} place(s)"]
        for d in found.differences:
            lines.append(f"  {d.what}: recorded {d.recorded}; now {d.now}")
        if found.note:
            lines.append(f"note: {found.note}")
        sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK if found.identical else EXIT_PROBLEM


def _diff(ledger: Ledger, args: argparse.Namespace) -> int:
    from ..ledger.diff import diff

    if len(args.ids) > 2:
        print("error: diff takes one or two compilation ids", file=sys.stderr)
        return EXIT_INVALID
    b = ledger.resolve(args.ids[-1])
    if len(args.ids) == 2:
        a = ledger.resolve(args.ids[0])
    else:
        previous = ledger.previous(b)
        if previous is None:
            print(f"error: compilation {b} is the first of its session", file=sys.stderr)
            return EXIT_INVALID
        a = previous
    found = diff(ledger.compilation(a), ledger.compilation(b))
    if args.json:
        _json(found.to_dict())
        return EXIT_OK
    sys.stdout.write(_diff_text(found))
    return EXIT_OK


def _diff_text(d: Any) -> str:
    lines = [f"diff {d.a} -> {d.b} (session {_session(d.sessions[0])} ->"
             f" {_session(d.sessions[1])})"]  # fmt: skip
    lines.append(
        f"outcome {d.outcomes[0]}/{d.statuses[0] or '-'} -> {d.outcomes[1]}/{d.statuses[1] or '-'}"
    )
    for name, (x, y) in (("package", d.package_ids), ("trace", d.trace_ids)):
        lines.append(f"{name:<8} {_short(x)} -> {_short(y)}" + ("" if x == y else " (changed)"))
    for title, items, sign in (("entered", d.entered, "+"), ("left", d.left, "-")):
        lines.append(f"{title} ({len(items)}):")
        lines += [f"  {sign} {i.identity}: {i.form} (cost {i.cost})" for i in items]
    lines.append(f"changed form ({len(d.changed)}):")
    for c in d.changed:
        lines.append(
            f"  ~ {c.identity}: {c.before.form} -> {c.after.form} ({', '.join(c.what)};"
            f" cost {c.before.cost} -> {c.after.cost})"
        )
    lines.append(
        f"tokens {d.costs[0]} -> {d.costs[1]} ({d.token_delta:+d}); budget"
        f" {_dash(d.budgets[0])} -> {_dash(d.budgets[1])}"
    )
    lines.append(
        f"offered: {len(d.offered_added)} added, {len(d.offered_removed)} removed,"
        f" {len(d.offered_changed)} changed"
    )
    lines.append(
        f"common prefix: the first {d.common_prefix} selected forms in render order are"
        f" unchanged ({d.selected[0]} -> {d.selected[1]} selected)"
    )
    if not d.both_rendered:
        lines.append("rendered bytes: not recorded for both (compile with --render to record them)")
    elif d.rendered_identical:
        lines.append(f"rendered bytes: identical ({d.rendered_sizes[0]} bytes)")
    else:
        lines.append(
            f"rendered bytes: first divergent byte at offset {d.first_divergent_byte}"
            f" (sizes {d.rendered_sizes[0]} -> {d.rendered_sizes[1]}); bytes before it are a"
            " reusable prefix"
        )
    if d.cache is not None:
        lines += d.cache.lines()
    return "\n".join(lines) + "\n"


def _verify(ledger: Ledger, args: argparse.Namespace) -> int:
    from ..ledger.verify import verify

    report = verify(ledger)
    if args.json:
        _json(report.to_dict())
    else:
        head = f"head {report.head_seq} {_short(report.head_hash)}"
        counts = (
            f"{report.events} events, {report.compilations} compilations"
            f" ({report.interrupted} interrupted), {report.artifacts} artifacts; {head}"
        )
        if report.ok:
            sys.stdout.write(f"ledger OK: {counts}\n")
        else:
            lines = [f"ledger DAMAGED: {len(report.problems)} problem(s); {counts}"]
            lines += [f"  {p.where}: {p.kind.value}: {p.detail}" for p in report.problems]
            sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK if report.ok else EXIT_PROBLEM


def _copy(ledger: Ledger, args: argparse.Namespace) -> int:
    from ..ledger.copy import copy

    with Ledger(args.target) as target:
        report = copy(ledger, target)
    kept = f" ({report.already} were there already)" if report.already else ""
    print(
        f"copied {report.copied} events{kept} from {ledger.path} to {target.path};"
        f" head {report.head_seq} {_short(report.head_hash)}",
        file=sys.stderr,
    )
    return EXIT_OK


def _export(ledger: Ledger, args: argparse.Namespace) -> int:
    from ..ledger.export import export

    if args.out is None:
        export(ledger, sys.stdout, artifacts=not args.no_artifacts)
        return EXIT_OK
    from ..ledger.store import PRIVATE_FILE_MODE

    # an export holds every request's content, as the ledger does: created 0600
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    with open(os.open(args.out, flags, PRIVATE_FILE_MODE), "w", encoding="utf-8") as out:
        count = export(ledger, out, artifacts=not args.no_artifacts)
    print(f"wrote {count} lines to {args.out}", file=sys.stderr)
    return EXIT_OK


def _cache(ledger: Ledger, args: argparse.Namespace) -> int:
    from ..ledger.usage import cache_usage

    report = cache_usage(ledger, args.session)
    if args.json:
        _json(report.to_dict())
        return EXIT_OK
    reads = report.reads()
    lines = [
        f"{len(report.rows)} sent bodies: {report.hits} hits, {report.misses} misses;"
        f" tokens read: billed {reads['billed']}, predicted {_dash(reads['predicted'])},"
        f" replayed {_dash(reads['replayed'])}",
        "seq    of     billed read/written/input   predicted   replayed    cache",
    ]
    for r in report.rows:
        predicted = "-" if r.predicted is None else f"{r.predicted[0]}/{r.predicted[1]}"
        replayed = "-" if r.replayed is None else f"{r.replayed[0]}/{r.replayed[1]}"
        state = "hit" if r.hit else "miss" if r.miss else "first"
        if r.diverged is not None and not r.hit:
            index, item = r.diverged
            state += f", diverged at block {index}" + (f" ({printable(item)})" if item else "")
        billed = f"{r.billed.read}/{r.billed.written}/{r.billed.input}"
        lines.append(f"{r.seq:<6} {_dash(r.of):<6} {billed:<27} {predicted:<11} {replayed:<11}"
                     f" {state}")  # fmt: skip
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


_COMMANDS = {
    "cache": _cache,
    "list": _list,
    "show": _show,
    "replay": _replay,
    "diff": _diff,
    "verify": _verify,
    "export": _export,
    "copy": _copy,
}
