"""The independent judges: they check a result, they never produce one.

``bundle``: ``Request``, ``Result`` -> ``[Violation]`` (every gate, constraint,
objective figure and identity re-derived in its own code).

A verifier imports only ``assembler.model`` (the request contract it judges
against), never a module whose output it judges: a shared bug would otherwise
agree with itself. So ``rendering``, ``bodies`` and ``structure`` keep their own
reading of every provider's body and rules, on purpose: besides the provider rooms
(``assembler.providers``), they are the only modules that name a provider.
"""
