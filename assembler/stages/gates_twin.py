"""The gates' first pass over the candidates, in pure Python: the compiled kernel's
twin (``_gates.c``).

Input: the request's candidates (in canonical order); the seal (a frozenset of names),
the current version of each source (a dict), the task's scope (or None), whether the
freshness gate is on (``operation`` current), whether a rendering asks for content, and
the instruction role.
Output: ``(ids, identities, flagged, picked, shared, linked)``: each candidate's id and
identity; the identities of the forms marked required; the candidates that do not
plainly pass every per-form gate at home (sealed, of a stale or unknown source, an
instruction, without content when it is needed, or of another scope); the ids of the
forms of the shared scope that pass every other gate (they pass, with a note); and the
candidates that depend on an identity, name a group or a tool call. ``gates.py`` words
the reasons of the picked ones and draws the derived gates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["first_pass"]


def first_pass(
    candidates: Sequence[Any],
    seal: frozenset[str],
    sources: Mapping[str, str],
    scope: str | None,
    checks_source: bool,
    require_content: bool,
    instruction: Any,
) -> tuple[list[str], list[str], list[str], list[Any], list[str], list[Any]]:
    """The first pass (see the module's docstring)."""
    ids: list[str] = []
    identities: list[str] = []
    picked: list[Any] = []
    shared: list[str] = []
    linked: list[Any] = []
    flagged: list[str] = []
    add_id, add_identity, pick, link = ids.append, identities.append, picked.append, linked.append
    for c in candidates:
        cid, identity = c.id, c.identity
        add_id(cid)
        add_identity(identity)
        if c.required:
            flagged.append(identity)
        if (
            (
                seal
                and (
                    cid in seal
                    or identity in seal
                    or (c.lineage and not seal.isdisjoint(c.lineage))
                )
            )
            or (
                checks_source
                and c.source is not None
                and (c.version is None or sources.get(c.source) != c.version)
            )
            or c.role is instruction
            or (require_content and c.content is None)
        ):
            pick(c)
        elif scope is not None and c.scope != scope:
            # passing every other gate, a shared form passes with its note (one in 20 at
            # scale); away or unknown, the gates' words tell which
            if c.scope == "shared":
                shared.append(cid)
            else:
                pick(c)
        if c.depends_on or c.group is not None or c.tool_call_id is not None:
            link(c)
    return ids, identities, flagged, picked, shared, linked
