"""The format's rules as constraints over a problem's forms.

Input: a validated ``Request``, the format it is rendered in, and the problem's forms
(ids and costs, canonical order).
Output: ``form_rules``: the rules of ``model/sendable.py`` over form indices (each a
``Clause`` or a ``Leading``, named by its rule), the ``Problem.rules`` every backend
keeps: the answer is the optimum among the selections the format can send.

With a cache section the layout keeps the previous call's blocks first
(``cache/prefix.py``): when the run's first decisive block may not open the
conversation, keeping the run through it is one more clause (``model/sendable.py``
says why that is all a cached layout changes): one of the run's forms up to it left
out, or a form selected whose place forbids keeping the prefix that far (a barrier).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cache.prefix import build_prefix
from ..model.rendering import RenderFormat
from ..model.sendable import Clause, Leading, Rule, kept_lead, selection_rules
from ..model.types import Request

__all__ = ["form_rules"]


def form_rules(
    request: Request, fmt: RenderFormat | None, form_ids: Sequence[str], cost: Sequence[int]
) -> tuple[Rule[int], ...]:
    """The rules a selection of these forms keeps to be sent in ``fmt`` (none without
    a format), over form indices."""
    if fmt is None:
        return ()
    index = {form_id: f for f, form_id in enumerate(form_ids)}
    out: list[Rule[int]] = []
    for rule in selection_rules(request, fmt, index.__contains__):
        if isinstance(rule, Clause):
            some = tuple(sorted(index[i] for i in rule.some))
            out.append(Clause(rule.rule, some, tuple(sorted(index[i] for i in rule.unless))))
        else:
            out.append(Leading(rule.rule, tuple(index[i] for i in rule.order), rule.good))
    if request.cache is not None:
        prefix = build_prefix(request, form_ids, cost)
        assert prefix is not None
        by_id = {c.id: c for c in request.candidates}
        run = [None if f is None else by_id[form_ids[f]] for f in prefix.forms]
        found = kept_lead(fmt, run)
        if found is not None:
            name, through = found
            barred = tuple(sorted(f for f, at in prefix.barriers.items() if at <= through))
            kept = tuple(sorted(f for f in prefix.forms[: through + 1] if f is not None))
            out.append(Clause(name, barred, kept))
    return tuple(out)
