"""The stages every strategy shares, before and after the decision.

``gates``: ``Request`` -> ``GateReport`` (the hard gates, a named reason for every
rejected form). ``choice``: ``Choice``, what a strategy decided. ``trace``: a ``Choice``
-> ``Result`` (a decision for every candidate, and the identities of ``identities``).

Imports only ``assembler.model``. A new gate goes in ``gates`` (and its independent
re-derivation in ``assembler.verifiers.bundle``).
"""
