"""Agent transcripts as requests: the cases the speed comparisons and the peers share.

Input: a number of rounds, a seed, the budget's share of the transcript's full cost.
Output: a ``Transcript``: the OpenAI Chat Completions messages of
``benchmarks.transcripts.openai_transcript`` (system, task, rounds of assistant tool
calls and tool results, some screenshots, a last question), their units as the
``fit`` adapter cuts them (``assembler.providers.openai_chat.fit.message_units``: a tool call turn
coupled with its results, long results also offered as head and tail or a
placeholder, the system prompt and the first and last user turns required), each
form's tokens counted once with o200k_base (sizes known in advance: every packer gets
the same counts), and a value per unit (recency, from 0.1 to 1.0). ``request(rounds)``
is the request of the first ``rounds`` rounds and the last question, at the whole
transcript's budget, so the request of one more round is the same request with that
round's candidates added (``next_turn``: a session's delta).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assembler.adapters.selection import recency, request_data
from assembler.providers.openai_chat.fit import message_units
from assembler.providers.units import Unit
from assembler.render.meters import meter_for

from .transcripts import openai_transcript

__all__ = ["SHARE", "Transcript", "transcript"]

# the budget: this share of what the whole transcript costs with every unit's full form
SHARE = 0.45
# tool results above this many tokens are also offered shortened (the adapter's default)
ELIDE_ABOVE = 800


@dataclass(frozen=True)
class Transcript:
    messages: list[dict[str, Any]]
    units: list[Unit]
    relevance: list[float]
    # the index of each round's first message; rounds end at the next start
    starts: list[int]
    budget: int

    @property
    def rounds(self) -> int:
        return len(self.starts)

    def _units_until(self, rounds: int) -> tuple[list[Unit], list[float]]:
        end = self.starts[rounds] if rounds < self.rounds else len(self.messages) - 1
        last = len(self.messages) - 1
        picked = [
            k
            for k, unit in enumerate(self.units)
            if unit.message < end or unit.message == last or unit.message < 0
        ]
        return [self.units[k] for k in picked], [self.relevance[k] for k in picked]

    def request(self, rounds: int | None = None) -> dict[str, Any]:
        """The request of the first ``rounds`` rounds (all by default) and the last
        question, at the whole transcript's budget."""
        units, relevance = self._units_until(self.rounds if rounds is None else rounds)
        return request_data(units, self.budget, relevance, task_id="transcript")

    def next_turn(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The request before the last round, and the delta that adds the last round."""
        before = self.request(self.rounds - 1)
        after = self.request(self.rounds)
        known = {c["id"] for c in before["candidates"]}
        return before, {"add": [c for c in after["candidates"] if c["id"] not in known]}

    def message_of(self) -> dict[str, int]:
        """Each candidate id's message index (tools: -1)."""
        request = self.request()
        by_key = {unit.key: unit.message for unit in self.units}
        return {c["id"]: by_key[c["identity"]] for c in request["candidates"]}


def transcript(rounds: int, seed: int = 0, share: float = SHARE) -> Transcript:
    messages, _tools = openai_transcript(seed, rounds)
    meter = meter_for("gpt-4o")
    units = message_units(messages, [], meter, ELIDE_ABOVE)
    relevance = [1.0 if u.message < 0 else recency(u.message, len(messages)) for u in units]
    starts = [i for i, m in enumerate(messages) if m["role"] == "assistant" and m.get("tool_calls")]
    total = sum(max(form.tokens for form in unit.forms) for unit in units)
    return Transcript(messages, units, relevance, starts, int(total * share))
