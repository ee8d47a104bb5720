"""A provider's prompt cache, replayed over a session of calls.

Input: ``CacheRules`` (``assembler.facts``) and a sequence of ``Call``: a
time in seconds and the prompt as ``CacheBlock`` values in provider order (a ``key``
naming the block's exact bytes, e.g. the sha256 of its rendered text; its token
count; the TTL of a cache breakpoint that ends it, if any; and ``span``, how many
provider content blocks it stands for).
Output: per call a ``CallCost`` (tokens read from the cache, written to it and sent
uncached, the price in units of the base input price per token, and in dollars when
the table knows the base price), and a ``SessionCost`` with the totals.
``blocks_of_rendering`` turns a ``Rendering`` into the block list.

Rules, the same as ``models/cache-providers.md``:

* **Prefixes.** An entry names a prefix of whole blocks (the chain of their keys);
  two prompts share a prefix only block for block, so a block that changes at all is
  a miss from that block on (a provider that matches tokens inside a block may read
  a little more than this counts).
* **Lifetimes.** An entry written or refreshed at time t with a TTL of s seconds is
  alive at a later time u exactly when u < t + s. Times must not go backwards.
* **Breakpoints** (``CacheMode.BREAKPOINTS``). A call may carry at most ``rules.breakpoints``
  breakpoints, with non-increasing TTLs (longer-lived entries first); each
  must name a TTL of the rules. Entries are written only at breakpoints, and only
  when the prefix up to the breakpoint has at least ``min_prefix_tokens`` tokens (a
  shorter breakpoint is ignored). A read looks back from each breakpoint: the
  breakpoint's own boundary first, then one boundary earlier at a time, at most
  ``rules.lookback`` boundaries counted in provider content blocks (``span``); the
  first live entry found is that breakpoint's hit. The call reads the longest hit
  (A); the tokens from A to each later breakpoint are written, each segment at the
  TTL of the breakpoint that ends it (so long-lived writes up to the last long-lived
  breakpoint, shorter ones after it: the pricing page's rule); the tokens after
  the last breakpoint are sent uncached. Every entry hit is refreshed (when
  ``refresh_on_hit``), every breakpoint's entry is written or refreshed with its TTL.
* **Automatic** (``CacheMode.AUTOMATIC``). Breakpoints are ignored. The call reads
  the longest prefix that is alive in the cache, if it has at least
  ``min_prefix_tokens`` tokens, rounded down to ``min_prefix_tokens + k *
  step_tokens``. A prompt of at least ``min_prefix_tokens`` tokens is then cached
  (every prefix of it written or refreshed with the default TTL); the rest of its
  tokens are written when the provider bills writes (``bills_writes``, at the TTL's
  write rate), else sent uncached (billed as plain input, as the provider reports
  them).
* **Entries** (``CacheMode.ENTRIES``). A call may mark breakpoints (any number;
  TTLs of the rules); with ``Call.implicit`` the provider adds its own at the prompt's
  end. Only the last ``rules.breakpoints`` breakpoints are written (the implicit one
  among them), those whose prefix reaches ``min_prefix_tokens``. A read is the longest
  prefix of the prompt ending where one of the conversation's latest
  ``rules.recent_entries`` entries ends, alive, with no lookback in blocks and no
  rounding; the tokens from it to each later written breakpoint are written at the
  breakpoint's TTL rate, the rest uncached; hits are refreshed.
* **Explicit caches** (automatic rules with ``explicit_caches``; other automatic
  caches ignore breakpoints). A
  breakpoint of TTL s marks an explicit cache of the prefix through its block:
  alive, it is read; else it is created, its tokens billed as plain input plus
  their storage for s seconds (``rules.storage`` per token and hour, prepaid: the
  provider bills storage for the time held). An explicit cache is not refreshed by
  use. The implicit cache may read a longer live prefix as before.
* **Units** (DeepSeek). A read is the longest prefix of the prompt that is a whole
  unit alive; the rest is sent uncached (written when the provider bills writes). After
  the call the units persisted are the prompt's end, the prompt followed by the call's
  ``output``, the longest prefix of it an earlier prompt sent (a common prefix), and,
  with ``rules.unit_tokens``, each multiple of that many tokens (a unit inside a block
  is read by a prompt with the same blocks through that one); units shorter than the
  minimum are not persisted.
* **Price** = (read x ``rules.read`` + written x the TTL's write rate + uncached) x the
  long-context rate the call's input tokens reach (``rules.tier``: the whole request,
  not the tokens past the line), + the output's tokens x ``rules.output`` x the tier's
  output rate when the rules know the output rate (+ storage).

Each call costs time linear in its blocks (a breakpoint's lookback is bounded), so a
session is linear in its total blocks; the cache keeps one entry per distinct
prefix seen.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..errors import SessionError
from ..facts import CacheMode, CacheRules, format_facts
from ..model.errors import UnknownCacheModel
from ..model.rendering import Rendering

__all__ = [
    "CacheBlock",
    "CacheSimulator",
    "Call",
    "CallCost",
    "SessionCost",
    "SessionError",
    "blocks_of_rendering",
    "simulate",
]


@dataclass(frozen=True, slots=True)
class CacheBlock:
    """One block of a prompt as the provider's cache sees it, in provider order (the
    rendering's own blocks are ``render.layout.Block``)."""

    key: str
    tokens: int
    # TTL in seconds of the cache breakpoint that ends this block (None: no breakpoint)
    breakpoint: int | None = None
    # provider content blocks this block stands for (a lookback counts these)
    span: int = 1


@dataclass(frozen=True, slots=True)
class Call:
    at: float
    blocks: tuple[CacheBlock, ...]
    # entries mode: the provider's own breakpoint at the end (False: explicit mode)
    implicit: bool = True
    # what the model answers (its tokens are billed as output when the rules know the
    # output rate; units mode persists the prompt followed by it as a unit)
    output: CacheBlock | None = None


@dataclass(frozen=True, slots=True)
class CallCost:
    """What one call cost: every token is read, written or uncached."""

    at: float
    tokens: int
    read: int
    written: int
    uncached: int
    # (TTL seconds, tokens) written at that lifetime's rate
    writes: tuple[tuple[int, int], ...]
    # blocks of the prompt that the read covers
    read_blocks: int
    # units of the base input price per token
    price: float
    usd: float | None
    # explicit caches created: their storage, in units of the base input price
    storage: float = 0.0
    # output tokens billed (included in ``price`` at the output rate when it is known)
    output: int = 0
    # the long-context multiplier of the input side (1.0: below every line)
    tier: float = 1.0


@dataclass(frozen=True, slots=True)
class SessionCost:
    calls: tuple[CallCost, ...]
    tokens: int
    read: int
    written: int
    uncached: int
    price: float
    usd: float | None
    storage: float = 0.0

    @property
    def ratio(self) -> float:
        """The price against sending every token uncached (1.0 = no saving)."""
        return self.price / self.tokens if self.tokens else 1.0


@dataclass(slots=True)
class _Entry:
    expiry: float
    ttl: int


def _chain(blocks: tuple[CacheBlock, ...]) -> tuple[list[bytes], list[int], list[int]]:
    """Per boundary after block j: the prefix's hash, its tokens, its content blocks."""
    hashes: list[bytes] = []
    tokens: list[int] = []
    spans: list[int] = []
    digest = b""
    total = covered = 0
    for block in blocks:
        digest = hashlib.sha256(digest + block.key.encode("utf-8")).digest()
        total += block.tokens
        covered += block.span
        hashes.append(digest)
        tokens.append(total)
        spans.append(covered)
    return hashes, tokens, spans


class CacheSimulator:
    """The provider's cache for one session: feed it the calls in order."""

    def __init__(self, rules: CacheRules) -> None:
        self.rules = rules
        self._entries: dict[bytes, _Entry] = {}
        # entries mode: entries in the order last written or refreshed (newest last)
        self._recent: dict[bytes, None] = {}
        # explicit caches (rules.explicit_caches): prefix hash -> expiry
        self._held: dict[bytes, float] = {}
        # units mode: every prefix an earlier prompt sent (a common one becomes a unit)
        self._seen: set[bytes] = set()
        self._calls = 0
        self._last: float | None = None

    def call(self, call: Call) -> CallCost:
        index = self._calls
        self._check(index, call)
        self._calls += 1
        self._last = call.at
        hashes, tokens, spans = _chain(call.blocks)
        if self.rules.mode is CacheMode.BREAKPOINTS:
            cost = self._explicit(index, call, hashes, tokens, spans)
        elif self.rules.mode is CacheMode.ENTRIES:
            cost = self._latest_entries(index, call, hashes, tokens)
        elif self.rules.mode is CacheMode.UNITS:
            cost = self._prefix_units(call, hashes, tokens)
        else:
            cost = self._automatic(index, call, hashes, tokens)
        return cost if call.output is None else self._answered(cost, call.output.tokens)

    def _answered(self, cost: CallCost, output: int) -> CallCost:
        """``cost`` with the output's tokens, billed at the output rate (when the rules
        know it) times the long-context rate the input reached."""
        rules = self.rules
        if rules.output is None:
            return replace(cost, output=output)
        tier = rules.tier(cost.tokens)
        price = cost.price + output * rules.output * (1.0 if tier is None else tier.output)
        return replace(cost, output=output, price=price, usd=rules.usd_per_mtok(price / 1e6))

    def _check(self, index: int, call: Call) -> None:
        if self._last is not None and call.at < self._last:
            raise SessionError(index, "at", f"{call.at} is before the previous call ({self._last})")
        for number, block in enumerate(call.blocks):
            if not block.key:
                raise SessionError(index, f"blocks[{number}].key", "must be a non-empty string")
            if block.tokens < 0 or block.span < 1:
                raise SessionError(
                    index, f"blocks[{number}]", f"tokens {block.tokens} and span {block.span}"
                    " must be >= 0 and >= 1",
                )  # fmt: skip

    def _alive(self, digest: bytes, at: float) -> _Entry | None:
        entry = self._entries.get(digest)
        return entry if entry is not None and at < entry.expiry else None

    def _keep(self, digest: bytes, at: float, ttl: int) -> None:
        entry = self._entries.get(digest)
        if entry is None or at >= entry.expiry:
            self._entries[digest] = _Entry(at + ttl, ttl)
        elif self.rules.refresh_on_hit:
            entry.ttl = max(entry.ttl, ttl)
            entry.expiry = max(entry.expiry, at + ttl)

    def _breakpoints(self, index: int, call: Call, tokens: list[int]) -> list[tuple[int, int]]:
        """(block index, TTL) of the call's breakpoints that can hold an entry."""
        marks = [(j, b.breakpoint) for j, b in enumerate(call.blocks) if b.breakpoint is not None]
        limit = self.rules.breakpoints
        if len(marks) > limit:
            raise SessionError(index, "blocks", f"{len(marks)} cache breakpoints, at most {limit}")
        previous: int | None = None
        for j, ttl in marks:
            try:
                self.rules.ttl(ttl)
            except UnknownCacheModel as error:
                raise SessionError(index, f"blocks[{j}].breakpoint", str(error)) from None
            if previous is not None and ttl > previous:
                raise SessionError(
                    index, f"blocks[{j}].breakpoint",
                    f"a {ttl}-second entry after a {previous}-second one (longer TTLs come first)",
                )  # fmt: skip
            previous = ttl
        return [(j, ttl) for j, ttl in marks if tokens[j] >= self.rules.min_prefix_tokens]

    def _explicit(
        self, index: int, call: Call, hashes: list[bytes], tokens: list[int], spans: list[int]
    ) -> CallCost:
        at, rules = call.at, self.rules
        marks = self._breakpoints(index, call, tokens)
        window = rules.lookback
        hit = -1
        touched: list[int] = []
        for b, _ttl in marks:
            j = b
            while j >= 0 and (window is None or spans[b] - spans[j] < window):
                if self._alive(hashes[j], at) is not None:
                    touched.append(j)
                    hit = max(hit, j)
                    break
                j -= 1
        read = tokens[hit] if hit >= 0 else 0
        writes: list[tuple[int, int]] = []
        done = read
        for b, ttl in marks:
            if b > hit:
                writes.append((ttl, tokens[b] - done))
                done = tokens[b]
        if rules.refresh_on_hit:
            for j in touched:
                entry = self._entries[hashes[j]]
                entry.expiry = max(entry.expiry, at + entry.ttl)
        for b, ttl in marks:
            self._keep(hashes[b], at, ttl)
        total = tokens[-1] if tokens else 0
        return self._cost(at, total, read, hit + 1, _merged(writes))

    def _latest_entries(
        self, index: int, call: Call, hashes: list[bytes], tokens: list[int]
    ) -> CallCost:
        at, rules = call.at, self.rules
        marks: list[tuple[int, int]] = []
        for j, block in enumerate(call.blocks):
            if block.breakpoint is not None:
                try:
                    rules.ttl(block.breakpoint)
                except UnknownCacheModel as error:
                    raise SessionError(index, f"blocks[{j}].breakpoint", str(error)) from None
                marks.append((j, block.breakpoint))
        last = len(call.blocks) - 1
        if call.implicit and last >= 0 and (not marks or marks[-1][0] != last):
            marks.append((last, rules.default_ttl.seconds))
        # the request writes its last few breakpoints only
        written_marks = [
            (j, ttl) for j, ttl in marks[-rules.breakpoints :]
            if tokens[j] >= rules.min_prefix_tokens
        ]  # fmt: skip
        recent = list(self._recent)
        if rules.recent_entries is not None:
            recent = recent[-rules.recent_entries :]
        candidates = set(recent)
        hit = -1
        for j in range(len(hashes) - 1, -1, -1):
            if hashes[j] in candidates and self._alive(hashes[j], at) is not None:
                hit = j
                break
        read = tokens[hit] if hit >= 0 else 0
        writes: list[tuple[int, int]] = []
        done = read
        for j, ttl in written_marks:
            if j > hit:
                writes.append((ttl, tokens[j] - done))
                done = tokens[j]
        if hit >= 0 and rules.refresh_on_hit:
            entry = self._entries[hashes[hit]]
            entry.expiry = max(entry.expiry, at + entry.ttl)
            self._touch(hashes[hit])
        for j, ttl in written_marks:
            self._keep(hashes[j], at, ttl)
            self._touch(hashes[j])
        total = tokens[-1] if tokens else 0
        return self._cost(at, total, read, hit + 1, _merged(writes))

    def _touch(self, digest: bytes) -> None:
        self._recent.pop(digest, None)
        self._recent[digest] = None

    def _automatic(
        self, index: int, call: Call, hashes: list[bytes], tokens: list[int]
    ) -> CallCost:
        at, rules = call.at, self.rules
        minimum, step = rules.min_prefix_tokens, rules.step_tokens
        total = tokens[-1] if tokens else 0
        stored, held = self._stored(index, call, hashes, tokens)
        hit = -1
        for j in range(len(hashes) - 1, -1, -1):
            if self._alive(hashes[j], at) is not None:
                hit = j
                break
        matched = tokens[hit] if hit >= 0 else 0
        read = minimum + (matched - minimum) // step * step if matched >= minimum else 0
        blocks = hit + 1 if read else 0
        if held >= 0 and tokens[held] >= read:
            read, blocks = tokens[held], held + 1
        writes: tuple[tuple[int, int], ...] = ()
        if total >= minimum:
            ttl = rules.default_ttl.seconds
            for digest in hashes:
                self._keep(digest, at, ttl)
            if rules.bills_writes and total > read:
                writes = ((ttl, total - read),)
        return self._cost(at, total, read, blocks, writes, stored)

    def _prefix_units(self, call: Call, hashes: list[bytes], tokens: list[int]) -> CallCost:
        """Units mode: the longest unit of the prompt alive is read, the rest sent (or
        written, when the provider bills writes); then the prompt's end, the prompt with
        the output, its prefix another prompt already sent, and each fixed interval of
        tokens are persisted as units (those of at least the minimum)."""
        at, rules = call.at, self.rules
        total = tokens[-1] if tokens else 0
        every = rules.unit_tokens
        read, blocks = 0, 0
        for j in range(len(hashes) - 1, -1, -1):
            if self._alive(hashes[j], at) is not None:
                read, blocks = tokens[j], j + 1
                break
        if every:
            # an interval unit ends inside a block: read when the block is the same
            for j, digest in enumerate(hashes):
                start = tokens[j - 1] if j else 0
                for point in range(start // every * every + every, tokens[j], every):
                    if point > read and self._alive(_inside(digest, point), at) is not None:
                        read, blocks = point, j
        units: list[tuple[bytes, int]] = []
        if hashes:
            units.append((hashes[-1], total))
        if hashes and call.output is not None:
            out = hashlib.sha256(hashes[-1] + call.output.key.encode("utf-8")).digest()
            units.append((out, total + call.output.tokens))
        shared = next((j for j in range(len(hashes) - 1, -1, -1) if hashes[j] in self._seen), None)
        if shared is not None:
            units.append((hashes[shared], tokens[shared]))
        if every:
            for j, digest in enumerate(hashes):
                start = tokens[j - 1] if j else 0
                for point in range(start // every * every + every, tokens[j] + 1, every):
                    key = hashes[j] if point == tokens[j] else _inside(digest, point)
                    units.append((key, point))
        ttl = rules.default_ttl.seconds
        if read and rules.refresh_on_hit:
            for j in range(len(hashes)):
                if tokens[j] <= read and (entry := self._alive(hashes[j], at)) is not None:
                    entry.expiry = max(entry.expiry, at + entry.ttl)
        for digest, length in units:
            if length >= rules.min_prefix_tokens:
                self._keep(digest, at, ttl)
        self._seen.update(hashes)
        writes: tuple[tuple[int, int], ...] = ()
        if rules.bills_writes and total > read:
            writes = ((ttl, total - read),)
        return self._cost(at, total, read, blocks, writes)

    def _stored(
        self, index: int, call: Call, hashes: list[bytes], tokens: list[int]
    ) -> tuple[float, int]:
        """Explicit caches (a breakpoint in automatic mode): the storage of those
        created now, and the last block of the longest one alive (-1: none). Other
        providers' automatic caches ignore breakpoints."""
        storage, held = 0.0, -1
        if not self.rules.explicit_caches:
            return storage, held
        for j, block in enumerate(call.blocks):
            ttl = block.breakpoint
            if ttl is None:
                continue
            rate = self.rules.storage
            if rate is None:
                raise SessionError(
                    index, f"blocks[{j}].breakpoint",
                    f"{self.rules.provider.value} {self.rules.family} has no explicit cache"
                    " with a known storage price (pass storage_usd_per_mtok_hour in the rules)",
                )  # fmt: skip
            if ttl < 1:
                raise SessionError(index, f"blocks[{j}].breakpoint", "a TTL must be >= 1 second")
            expiry = self._held.get(hashes[j])
            if expiry is not None and call.at < expiry:
                held = j
                continue
            self._held[hashes[j]] = call.at + ttl
            storage += tokens[j] * ttl / 3600 * rate
        return storage, held

    def _cost(
        self,
        at: float,
        total: int,
        read: int,
        blocks: int,
        writes: tuple[tuple[int, int], ...],
        storage: float = 0.0,
    ) -> CallCost:
        """The call's input price: read x read rate + each lifetime's writes at its rate
        + the uncached tokens, all at the long-context rate the input's size reaches
        (the whole request, not the tokens past the line), + storage."""
        rules = self.rules
        written = sum(n for _ttl, n in writes)
        uncached = total - read - written
        tier = rules.tier(total)
        rate = 1.0 if tier is None else tier.input
        price = read * rules.read + uncached + sum(n * rules.ttl(ttl).write for ttl, n in writes)
        price = price * rate + storage
        usd = rules.usd_per_mtok(price / 1e6)
        return CallCost(
            at, total, read, written, uncached, writes, blocks, price, usd, storage, 0, rate
        )


def _inside(digest: bytes, point: int) -> bytes:
    """The key of a unit ending ``point`` tokens into the prompt, inside the block whose
    prefix hash is ``digest``."""
    return hashlib.sha256(digest + b"@" + str(point).encode("ascii")).digest()


def _merged(writes: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: dict[int, int] = {}
    for ttl, n in writes:
        merged[ttl] = merged.get(ttl, 0) + n
    return tuple(sorted(merged.items(), reverse=True))


def simulate(rules: CacheRules, calls: Iterable[Call]) -> SessionCost:
    """Replay ``calls`` in order from an empty cache."""
    simulator = CacheSimulator(rules)
    costs = tuple(simulator.call(call) for call in calls)
    usd = None if rules.input_usd_per_mtok is None else sum(c.usd or 0.0 for c in costs)
    return SessionCost(
        costs,
        tokens=sum(c.tokens for c in costs),
        read=sum(c.read for c in costs),
        written=sum(c.written for c in costs),
        uncached=sum(c.uncached for c in costs),
        price=sum(c.price for c in costs),
        usd=usd,
        storage=sum(c.storage for c in costs),
    )


def blocks_of_rendering(
    rendering: Rendering, *, ttl: int = 300, envelope_tokens: int = 0
) -> tuple[CacheBlock, ...]:
    """The simulator's blocks of ``rendering`` (``render_version`` 1, any format).

    One block per manifest item and envelope part, each from the end of the one before
    to the end of its footer (``\\n</item>\\n``, ``\\n</query>\\n``, the line break of
    ``headers`` ``none``; a tool call has none, nor, from ``render_version`` 3, a
    conversation turn), keyed by the sha256 of those bytes; an item's tokens are its
    manifest ``tokens``, an envelope part's ``envelope_tokens`` (declared costs do not
    count the envelope). A manifest breakpoint, which falls on a block's end, becomes a
    breakpoint of ``ttl`` seconds. In a format whose version 2 tool call is two content
    blocks (its header as text, then the call: the format's ``call_blocks``), its
    ``span`` is 2. This is the one place that knows the renderer's framing: a change of
    layout or framing changes only this.
    """
    data = rendering.data
    manifest = rendering.manifest
    # the content blocks a version 2 tool call with a header made in this format
    figures = format_facts(manifest.format)
    call_blocks = 1 if figures is None else figures.call_blocks
    # version 3 sends conversation turns (a call too) as their content alone
    bare = manifest.render_version >= 3
    turns = ("user_turn", "assistant_turn", "tool_call", "tool_result")
    parts = sorted(
        [(i.offset, i.length, i.tokens,
          call_blocks if i.kind == "tool_call" and not bare else 1,
          bare and i.kind in turns)
         for i in manifest.items]
        + [(offset, length, envelope_tokens, 1, False)
           for _part, offset, length in manifest.envelope]
    )  # fmt: skip
    marks = set(manifest.breakpoints)
    blocks: list[CacheBlock] = []
    start = 0
    for offset, length, tokens, span, alone in parts:
        end = offset + length
        if alone:
            pass
        elif data.startswith(b"\n</", end):
            end = data.index(b">\n", end) + 2
        elif data.startswith(b"\n", end) and manifest.headers == "none":
            end += 1
        key = hashlib.sha256(data[start:end]).hexdigest()
        blocks.append(CacheBlock(key, tokens, ttl if end in marks else None, span))
        marks.discard(end)
        start = end
    if start != len(data) or marks:
        raise ValueError(
            f"the rendering's framing is not the one this adapter knows (blocks end at byte"
            f" {start} of {len(data)}; breakpoints {sorted(marks)} fall inside a block)"
        )
    return tuple(blocks)
