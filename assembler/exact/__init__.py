"""The exact strategy: the optimal bundle, or a refusal, proven.

``closure``: ``Request``, ``GateReport`` -> ``Problem`` (integer arrays: costs,
values, closure, groups; knows nothing of solvers). ``backend``: the narrow
interface every solver implements (``Problem`` -> ``Outcome``). ``reduce``: exact
reduction to a core. ``search``: a small branch and bound for small cores.
``cpsat``: the CP-SAT encoding, the only module that imports OR-Tools. ``refusal``:
required-material refusals and the priced mandatory closure. ``reducing``: the
backend that chains reduction, small search and CP-SAT level by level. ``solve``:
the chain after the gates, for any backend.
"""
