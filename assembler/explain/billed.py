"""The page's billed section: what the provider billed for the compilation's body.

Input: the ledger's ``UsageRow`` for the body (``assembler.ledger.usage``), or None.
Output: the HTML section (empty without one): tokens billed as read, written and in
all, the prediction and the simulator's replay of the sent bodies, hit or miss, and
for a miss the first block whose bytes differ from the previous body's.
"""

from __future__ import annotations

from ..ledger.usage import UsageRow
from .markup import e, figure

__all__ = ["billed_section"]


def billed_section(row: UsageRow | None) -> str:
    if row is None:
        return ""
    state = "hit" if row.hit else "miss" if row.miss else "first body of the session"
    figures = [
        figure("billed-read", "Billed read", row.billed.read, "tokens"),
        figure("billed-written", "Billed written", row.billed.written, "tokens"),
        figure("billed-input", "Billed input", row.billed.input, "tokens"),
        figure("predicted-read", "Predicted read",
               None if row.predicted is None else row.predicted[0], "tokens"),
        figure("replayed-read", "Replayed read",
               None if row.replayed is None else row.replayed[0], "tokens"),
        figure("cache-state", "Cache", state, ""),
    ]  # fmt: skip
    if row.diverged is not None and not row.hit:
        index, item = row.diverged
        figures.append(figure("diverged-block", "Diverged at block", index, "",
                              f" ({item})" if item else ""))  # fmt: skip
        why = (
            f"The provider read nothing: the sent bytes differ from the previous body's from"
            f" block {index}" + (f" ({item})" if item else "") + " on, so no entry matched."
        )
    elif row.hit:
        why = f"The provider read {row.billed.read} tokens of this body from its cache."
    else:
        why = "The provider read nothing from its cache for this body."
    return (
        '<section id="billed" aria-labelledby="h-billed">'
        '<h2 id="h-billed">Billed by the provider</h2>'
        f'<p class="why">Usage report {row.seq} of session {e(row.session or "-")}: what the'
        " provider billed for this body, against the cache-aware decision's prediction and"
        " the simulator's replay of the session's sent bodies.</p>"
        f'<dl class="figures">{"".join(figures)}</dl>'
        f"<p>{e(why)}</p></section>"
    )
