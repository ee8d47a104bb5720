"""The providers: one room per provider API, behind one interface.

Input: nothing (importing the package loads no room). Output: the rooms and what they
share. Each room (``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini``) is
the one place of its API: ``body.py`` builds its body from a layout's blocks, checks
its provider's rules and counts it as billed; ``fit.py`` cuts a caller's list of it
into units for ``fit`` and puts the chosen ones back. Every room satisfies
``interface.Api``; ``registry`` finds a format's room, or a caller's list's. Their
figures (models, windows, framing, images, cache rules, prices, usage fields), each
with its source, are the provider's data file: ``assembler/facts/<provider>.json``.
"""
