"""The previous rendering mapped onto a problem: which blocks a selection keeps, at what price.

Input: a validated ``Request`` with a ``cache`` section and the forms that may be
selected (a ``Problem``'s ``form_ids`` and ``cost``, or a bundle's selection).
Output: a ``Prefix``: for each block of the previous call that this call could keep
(the *matchable run*), the problem's form that renders it byte for byte and its tokens;
the forms whose selection forbids keeping the prefix past a block (the layout's rules);
the cache's entries and prices. ``Prefix.kept(selection)`` and ``Prefix.price(...)``
give the kept prefix and the price of any selection, by the rules of
``models/README.md`` section 6b, with no solver; the cache-aware search encodes the same
rules as constraints, and the verifier re-derives them on its own.

The layout (section 14): the previous call's blocks kept, up to the first change, then
the rest of the selection in canonical order (a tool result whose call ends the kept
prefix first). The kept prefix is the longest run of previous blocks, each selected in
the same form with the same content (the instruction: the same text), such that what
follows stays in the provider's order: tool definitions, then the system prompt (the
instruction, system, developer and memory items), then the messages (``rank``), and no
conversation item before a kept one in ``(turn, id)`` order. The matchable run ends at
the first block no selection can keep: a candidate no longer offered or eligible, a
content that changed, or a block the previous call itself had out of that order (a
block between a tool call and its result among them: the layout puts a result right
after its call).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..model.cache import Cache, CacheOutcome, CacheTerms
from ..model.types import Candidate, Kind, Request

__all__ = ["Prefix", "Price", "build_prefix", "content_sha256", "order_key", "rank"]

_CONVERSATION = frozenset({Kind.USER_TURN, Kind.ASSISTANT_TURN, Kind.TOOL_CALL, Kind.TOOL_RESULT})


def content_sha256(candidate: Candidate) -> str | None:
    content = candidate.content
    return None if content is None else hashlib.sha256(content.encode("utf-8")).hexdigest()


def order_key(candidate: Candidate, calls: dict[str, tuple[int, str]]) -> tuple[int, str, int]:
    """A conversation item's place: ``(turn, id, 0)``, a tool result right after its
    call, ``(call's turn, call's id, 1)`` (``calls``: tool call id -> the least key of
    its call's forms)."""
    if candidate.kind is Kind.TOOL_RESULT:
        turn, call = calls.get(str(candidate.tool_call_id), (candidate.turn, candidate.id))
        return turn, call, 1
    return candidate.turn, candidate.id, 0


@dataclass(frozen=True, slots=True)
class Price:
    """A selection's place in the cache: previous blocks kept (instruction included),
    tokens read, written and sent uncached, and the price in millionths of a token at
    the base input price."""

    kept: int
    read: int
    written: int
    uncached: int
    price: int
    # the index of the previous block whose entry is read (None: nothing is read)
    entry: int | None


@dataclass(frozen=True, slots=True)
class Prefix:
    cache: Cache
    # per block of the matchable run: the form rendering it (None: the instruction)
    forms: tuple[int | None, ...]
    tokens: tuple[int, ...]
    # whether every previous block is in the run (a selection may keep them all)
    complete: bool
    # block indices whose entry can be read (a breakpoint, long enough; empty when the
    # provider caches by itself or the entries have expired)
    entries: tuple[int, ...]
    # form -> the first block its selection forbids keeping (forms outside the run)
    barriers: dict[int, int]
    # tokens of this call's instruction (0 without one)
    instruction: int
    # each form's tokens (its cost)
    cost: tuple[int, ...]
    # the least number of blocks an automatic cache reads (the first block whose
    # cumulative tokens reach the minimum); None: never
    automatic_from: int | None

    @property
    def size(self) -> int:
        return len(self.forms)

    def kept(self, selection: Iterable[int]) -> int:
        """How many blocks of the run ``selection`` keeps (the longest valid prefix)."""
        chosen = set(selection)
        limit = self.size
        for form in chosen:
            barrier = self.barriers.get(form)
            if barrier is not None and barrier < limit:
                limit = barrier
        kept = 0
        for block in self.forms[:limit]:
            if block is not None and block not in chosen:
                break
            kept += 1
        return kept

    def price(self, selection: tuple[int, ...]) -> Price:
        """The price of sending ``selection`` (the rules of section 6b)."""
        cache, pricing = self.cache, self.cache.pricing
        kept = self.kept(selection)
        total = self.instruction + sum(self.cost[f] for f in selection)
        read, entry = self.read(kept)
        cacheable = cache.writes and total >= cache.min_prefix_tokens
        written = total - read if cacheable else 0
        uncached = total - read - written
        price = pricing.read * read + pricing.write * written + pricing.input * uncached
        return Price(kept, read, written, uncached, price, entry)

    def outcome(
        self,
        selection: tuple[int, ...],
        terms: CacheTerms | None = None,
        blind: tuple[int, int] | None = None,
        price_floor: int | None = None,
    ) -> CacheOutcome:
        """The cache record of ``selection``: its prefix and price, with the order's
        ``terms`` and the cache-blind optimum's ``blind`` (value, price) when decided
        by the cache-aware order (None for a baseline's)."""
        price = self.price(selection)
        return CacheOutcome(
            terms=terms,
            blind_value=None if blind is None else blind[0],
            blind_price=None if blind is None else blind[1],
            kept=price.kept,
            previous=len(self.cache.previous),
            read=price.read,
            written=price.written,
            uncached=price.uncached,
            price=price.price,
            price_floor=price_floor,
            appended=self.complete and price.kept == self.size,
            entry=price.entry,
        )

    def read(self, kept: int) -> tuple[int, int | None]:
        """Tokens read when ``kept`` blocks are kept, and the entry read."""
        if kept == 0:
            return 0, None
        cache = self.cache
        if cache.breakpoints > 0:
            entry = max((e for e in self.entries if e < kept), default=None)
            return (0, None) if entry is None else (sum(self.tokens[: entry + 1]), entry)
        if self.automatic_from is None or kept <= self.automatic_from:
            return 0, None
        common = sum(self.tokens[:kept])
        least, step = cache.min_prefix_tokens, cache.step_tokens
        return least + step * ((common - least) // step), kept - 1


def rank(kind: Kind) -> int:
    """A kind's place in the provider's order: tool definitions (0), the system prompt
    (1: the instruction, system, developer and memory items), the messages (2)."""
    return _RANK.get(kind, 2)


_RANK = {Kind.TOOL_DEFINITION: 0, Kind.SYSTEM: 1, Kind.DEVELOPER: 1, Kind.MEMORY: 1}


def build_prefix(request: Request, form_ids: Sequence[str], cost: Sequence[int]) -> Prefix | None:
    """The prefix model of ``request`` over the forms ``form_ids`` (None without a
    ``cache`` section)."""
    cache = request.cache
    if cache is None:
        return None
    form_of = {form_id: f for f, form_id in enumerate(form_ids)}
    by_id = {c.id: c for c in request.candidates}
    calls: dict[str, tuple[int, str]] = {}
    for c in request.candidates:
        if c.kind is Kind.TOOL_CALL:
            at = (c.turn, c.id)
            calls[str(c.tool_call_id)] = min(calls.get(str(c.tool_call_id), at), at)
    text = request.task.instruction
    sha = None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()
    forms: list[int | None] = []
    tokens: list[int] = []
    ranks: list[int] = []
    keys: list[tuple[int, str, int] | None] = []
    instruction: int | None = cache.instruction_tokens
    # the tool call the last block of the run made, when it did (its result comes next)
    open_call: str | None = None
    for block in cache.previous:
        key = None
        if block.id is None:
            if block.content_sha256 != sha:
                break
            form, count, place = None, block.tokens, 1
            if instruction is None:
                instruction = block.tokens
            count = instruction
        else:
            candidate = by_id.get(block.id)
            form = form_of.get(block.id)
            if (
                candidate is None
                or form is None
                or content_sha256(candidate) != block.content_sha256
                or (block.form is not None and block.form != candidate.form)
            ):
                break
            count, place = candidate.cost, rank(candidate.kind)
            if candidate.kind in _CONVERSATION:
                key = order_key(candidate, calls)
        # a previous call out of the layout's order: what follows cannot be kept
        if ranks and place < ranks[-1]:
            break
        # (a tool call is directly followed by its result: a block between them ends it)
        if open_call is not None and not (
            block.id is not None
            and by_id[block.id].kind is Kind.TOOL_RESULT
            and by_id[block.id].tool_call_id == open_call
        ):
            break
        open_call = None
        if block.id is not None and by_id[block.id].kind is Kind.TOOL_CALL:
            open_call = by_id[block.id].tool_call_id
        if key is not None:
            last = next((k for k in reversed(keys) if k is not None), None)
            if last is not None and key <= last:
                break
        forms.append(form)
        tokens.append(count)
        ranks.append(place)
        keys.append(key)
    complete = len(forms) == len(cache.previous)
    if sha is not None and None not in forms:
        # an instruction the previous call did not send opens the system prompt: the
        # prefix cannot run past the system prompt into the messages
        cut = next((j for j, r in enumerate(ranks) if r > 1), len(forms))
        complete = complete and cut == len(forms)
        del forms[cut:], tokens[cut:], ranks[cut:], keys[cut:]
    in_run = {f for f in forms if f is not None}
    # ranks and conversation keys increase along the run: a barrier is a bisection
    ordered = [(k, j) for j, k in enumerate(keys) if k is not None]
    ordered_keys = [k for k, _ in ordered]
    barriers: dict[int, int] = {}
    for f, form_id in enumerate(form_ids):
        if f in in_run:
            continue
        candidate = by_id[form_id]
        place = rank(candidate.kind)
        if place < 2:
            later = bisect_right(ranks, place)
            if later < len(forms):
                barriers[f] = later
        elif candidate.kind in _CONVERSATION:
            later = bisect_right(ordered_keys, order_key(candidate, calls))
            if later < len(ordered):
                barriers[f] = ordered[later][1]
    entries: tuple[int, ...] = ()
    automatic_from = None
    if cache.alive and forms:
        cumulative = 0
        reached = []
        for count in tokens:
            cumulative += count
            reached.append(cumulative >= cache.min_prefix_tokens)
        if cache.breakpoints > 0:
            marks = [b.breakpoint for b in cache.previous]
            entries = tuple(j for j in range(len(forms)) if marks[j] and reached[j])
        else:
            automatic_from = next((j for j, ok in enumerate(reached) if ok), None)
    return Prefix(
        cache=cache,
        forms=tuple(forms),
        tokens=tuple(tokens),
        complete=complete,
        entries=entries,
        barriers=barriers,
        instruction=0 if sha is None else (instruction or 0),
        cost=tuple(cost),
        automatic_from=automatic_from,
    )
