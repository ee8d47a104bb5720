"""The online planner: each call's cache terms from what the session has shown so far.

Input: the provider's ``CacheRules``, the budget, the tolerance, and per call what was
observed (``Planner.observe``: its time, the tokens of new material it brought, the
share of the previous prompt it kept as its prefix, and whether its rewrite could keep
the headroom asked).
Output: per call a ``Terms``: send the cache-blind request (``blind``), or the
cache-aware one with this ``headroom``; with the expected figures behind the choice.

* **What a write is worth.** Tokens written now are read by the next call only if it
  comes within the entry's lifetime and keeps the prefix. The planner estimates that
  chance as alive x kept: the share of the observed gaps below the TTL and the mean
  share of the previous prompt the calls kept (both smoothed towards 1/2 with one
  pseudo-observation each way, so a new session starts undecided). A token written
  costs ``write - 1`` more than one sent uncached and saves ``write - read`` on the
  next call if read: writing pays when alive x kept x (write - read) > write - 1.
  When it does not, the cache-aware order has nothing to buy: the call is sent
  cache-blind (most value).
* **The lifetime.** With ``ttl`` None and a provider offering several at breakpoints
  (a short one at a low write rate, a long one at a higher), each is priced: the chance above
  with its own TTL, and the expected price below with its own write rate; the least
  wins (a session with pauses past 5 minutes may write 1-hour entries).
* **The headroom** is the share of the budget a rewrite leaves free so that the
  following calls append. Over the coming calls, a rewrite of ``(1 - h) B`` tokens is
  followed by ``k = h B / g`` appends (``g`` the mean new tokens a call brings), each
  reading its prefix with the chance above and writing what it adds; the planner takes
  the ``h`` of a grid with the least expected price per call, no higher than the last
  headroom a rewrite could keep plus one step (the tolerance decides how much a
  rewrite may give up: asking more than it allows leaves no headroom at all).
* **Below a long-context line** (``compaction``): a session whose history would pass
  the line where the provider bills the whole request at a higher rate compacts before
  it does, to the share of the line whose cycle (the rewrite, then the appends until
  the line) has the least expected price per call per token kept.
* **At tolerance 0** the planner sends the cache-blind request at every call, so its
  bytes are the cache-blind policy's and so is its price, call by call: by
  construction it never costs more. (Pricing the value-optimal ties instead can cost
  more later: a different layout writes entries the next calls may never read.)
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from ..facts import CacheRules

__all__ = ["HEADROOMS", "KEEPS", "Compaction", "Planner", "Terms", "compaction", "expected_price"]

# the headrooms the planner chooses from
HEADROOMS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)
# the calls of the past the estimates read
WINDOW = 50


@dataclass(frozen=True, slots=True)
class Terms:
    blind: bool
    headroom: float
    # the chance that what this call writes is read by the next
    read_chance: float
    # the expected price per call at that headroom, per token of budget
    expected: float
    # the lifetime of the entries this call writes (seconds), the cheapest expected
    ttl: int | None = None


def expected_price(h: float, budget: int, growth: float, chance: float, read: float,
                   write: float) -> float:  # fmt: skip
    """The expected price per call of a cycle: a rewrite of (1 - h) B tokens written,
    then the appends that fit in h B, each reading its prefix with ``chance`` (else
    writing it all again) and writing what it adds; per token of budget."""
    size = (1.0 - h) * budget
    appends = 0 if growth <= 0 else int(h * budget // growth)
    if growth <= 0:
        # nothing new arrives: one rewrite, then reads for ever
        return (chance * read + (1 - chance) * write) * size / budget
    total = write * size
    for j in range(1, appends + 1):
        prompt = size + j * growth
        hit = read * (prompt - growth) + write * growth
        total += chance * hit + (1.0 - chance) * write * prompt
    return total / (appends + 1) / budget


@dataclass
class Planner:
    rules: CacheRules
    budget: int
    tolerance: float
    ttl: int | None = None
    _gaps: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))
    _kept: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))
    _growth: deque[int] = field(default_factory=lambda: deque(maxlen=WINDOW))
    _last_at: float | None = None
    # the most headroom a rewrite is allowed to ask next (after one that could not keep it)
    _ceiling: float = HEADROOMS[-1]

    def observe(self, at: float, added: int, kept: float | None = None,
                headroom_kept: bool | None = None, asked: float | None = None) -> None:  # fmt: skip
        """What call ``at`` showed: ``added`` tokens of new material, the share of the
        previous prompt kept as its prefix (None: the first call), and, when it was a
        rewrite asking ``asked`` headroom, whether the tolerance let it keep it."""
        if self._last_at is not None:
            self._gaps.append(at - self._last_at)
        self._last_at = at
        self._growth.append(max(0, added))
        if kept is not None:
            self._kept.append(min(1.0, max(0.0, kept)))
        if headroom_kept is not None and asked is not None:
            step = HEADROOMS[1] - HEADROOMS[0]
            self._ceiling = (
                min(HEADROOMS[-1], max(self._ceiling, asked + step))
                if headroom_kept
                else max(0.0, asked - step)
            )

    def read_chance(self, ttl: int | None = None) -> float:
        """The chance that what a call writes with entries of ``ttl`` seconds (default:
        the planner's, else the rules' default) is read by the next call."""
        if ttl is None:
            ttl = self.ttl if self.ttl is not None else self.rules.default_ttl.seconds
        alive = (sum(gap < ttl for gap in self._gaps) + 1) / (len(self._gaps) + 2)
        kept = (sum(self._kept) + 1) / (len(self._kept) + 2)
        return alive * kept

    def terms(self) -> Terms:
        """This call's terms: for each lifetime a call may write (the planner's own, or
        every one the provider offers at breakpoints), the chance a write is read and
        the headroom of least expected price; the lifetime whose price is least, or
        the cache-blind request when no lifetime's writes pay."""
        rules = self.rules
        read = rules.read
        growth = sum(self._growth) / len(self._growth) if self._growth else 0.0
        options = [h for h in HEADROOMS if h <= self._ceiling + 1e-9] or [0.0]
        best: tuple[float, float, float, int] | None = None
        for ttl, write in self._lifetimes():
            chance = self.read_chance(ttl)
            if rules.bills_writes and chance * (write - read) <= write - 1.0:
                continue  # writing at this lifetime does not pay back
            expected, headroom = min(
                (expected_price(h, self.budget, growth, chance, read, write), h) for h in options
            )
            if best is None or expected < best[0]:
                best = (expected, headroom, chance, ttl)
        if self.tolerance <= 0 or best is None:
            return Terms(True, 0.0, self.read_chance(), math.nan)
        expected, headroom, chance, ttl = best
        return Terms(False, headroom, chance, expected, ttl)

    def _lifetimes(self) -> list[tuple[int, float]]:
        rules = self.rules
        if self.ttl is not None:
            rule = rules.ttl(self.ttl)
            return [(rule.seconds, rule.write if rules.bills_writes else 1.0)]
        if not rules.bills_writes:
            return [(rules.default_ttl.seconds, 1.0)]
        if rules.breakpoints == 0:
            return [(rules.default_ttl.seconds, rules.default_ttl.write)]
        return [(rule.seconds, rule.write) for rule in rules.ttls]


# the shares of the line a compaction may keep, the planner's grid
KEEPS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


@dataclass(frozen=True, slots=True)
class Compaction:
    """When to compact and to what: before a call would pass ``trigger`` tokens, drop
    the oldest material down to ``keep`` tokens; ``per_value`` is the expected price per
    call over a cycle per token kept (the planner's choice minimises it)."""

    trigger: int
    keep: int
    per_value: float


def compaction(
    rules: CacheRules, line: int, growth: float, head: int = 0, least: float = 0.0
) -> Compaction:
    """The compaction a session growing by ``growth`` tokens a call should make below a
    long-context ``line`` (``rules.tier``): over a cycle (a rewrite of what is kept, then
    the appends until the line), each call reads what the last one sent, writes what it
    adds and pays the rate its size reaches; the target of least expected price per call
    per token kept (the tokens a call sends on average, a stand-in for the value kept)
    wins. ``head``: tokens every call sends (never dropped); ``least``: the least share of
    the line a compaction keeps (what the caller will not give up)."""
    read = rules.read
    write = rules.default_ttl.write if rules.bills_writes else 1.0
    trigger = max(head + 1, int(line - max(growth, 1.0)))
    best: Compaction | None = None
    for share in [s for s in KEEPS if s >= least] or [least]:
        keep = max(head, int(share * trigger))
        if growth <= 0 or keep >= trigger:
            continue
        calls = max(1, int((trigger - keep) // growth))
        price = 0.0
        sent = 0.0
        for j in range(calls):
            size = keep + j * growth
            tier = rules.tier(int(size))
            rate = 1.0 if tier is None else tier.input
            fresh = size if j == 0 else growth
            price += rate * (write * fresh + read * (size - fresh))
            sent += size
        per_value = (price / calls) / (sent / calls)
        if best is None or per_value < best.per_value:
            best = Compaction(trigger, keep, per_value)
    if best is None:
        return Compaction(trigger, head, math.inf)
    return best
