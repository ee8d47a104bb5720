"""The stages every strategy shares, before and after the decision.

``gates``: ``Request`` -> ``GateReport`` (the hard gates, a named reason for every
rejected form). ``trace``: a selection -> ``Result`` (a decision for every
candidate, ``package_id`` and ``trace_id``, the text table).

Imports only ``assembler.model``. A new gate goes in ``gates`` (and its independent
re-derivation in ``assembler.verifiers.bundle``).
"""
