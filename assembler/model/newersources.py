"""What the GPT-5.6 family's cache figures rest on (``providers.FAMILIES`` uses it).

Input: nothing. Output: ``OPENAI_56_NOTES``, figure name -> what OpenAI's prompt
caching page (or a copy of its API reference) says of it, for the entries mode:
explicit ``prompt_cache_breakpoint`` s, four writes a request, the latest 80 entries
matched, a 30-minute TTL. ``models/cache-providers.md`` quotes the same.
"""

from __future__ import annotations

__all__ = ["OPENAI_56_NOTES"]

_OPENAI_REFERENCE = (
    "the API reference's PromptCacheOptions text, read in a third-party copy of it (the"
    " async-openai 0.42.0 crate's documentation on docs.rs)"
)
OPENAI_56_NOTES: tuple[tuple[str, str], ...] = (
    (
        "mode",
        (
            "'You can add explicit breakpoints to content blocks with "
            "prompt_cache_breakpoint'; 'OpenAI considers up to the latest 80 breakpoints in the "
            f"conversation, without a content-block lookback limit': {_OPENAI_REFERENCE}"
        ),
    ),
    (
        "breakpoints",
        (
            "'Each request can write up to four breakpoints'; with implicit mode 'one "
            f"implicit breakpoint and ... up to the latest three explicit': {_OPENAI_REFERENCE}"
        ),
    ),
    (
        "lookback",
        (f"no content-block lookback limit: {_OPENAI_REFERENCE}"),
    ),
    (
        "recent_entries",
        (f"'up to the latest 80 breakpoints': {_OPENAI_REFERENCE}"),
    ),
    (
        "write",
        (
            "'For GPT-5.6 models and later model families, cache writes cost 1.25x the "
            "uncached input token rate'"
        ),
    ),
    (
        "read",
        ("reads 0.1x, as quoted from the page on 2026-09-02 by a third party"),
    ),
    (
        "min_prefix_tokens",
        ("1,024 for GPT-5.6 and later, as quoted on 2026-09-02"),
    ),
    (
        "step_tokens",
        (
            "128 as quoted on 2026-09-02 for reported cached_tokens; a breakpoint's "
            "boundary 'is not rounded to a token block' (the Azure AI Projects reference of "
            "PromptCacheBreakpointConfig), so the simulator reads an entry whole"
        ),
    ),
    (
        "ttls",
        (
            f"'The ttl defaults to 30m, which is currently the only supported value': "
            f"{_OPENAI_REFERENCE}"
        ),
    ),
    (
        "refresh_on_hit",
        "reusing a prefix refreshes its lifetime without another write charge",
    ),
)
