"""The exact strategy: the optimal bundle, or a refusal, proven.

``closure``: ``Request``, ``GateReport`` -> ``Problem`` (integer arrays: costs,
values, closure, groups; knows nothing of solvers). ``backend``: the narrow
interface every solver implements (``Problem`` -> ``SolveOutcome``). ``presolve``,
``relaxation`` (the LP) and ``incumbent`` feed ``fixings`` (the forms a threshold
proves out of or into the optimum), and ``core`` propagates them into the core still
to search. ``knapsack`` (a program over the reachable sums) and ``search`` (a small branch and
bound) settle small cores; ``cpmodel``: a CP-SAT model written as its protocol
buffer, and OR-Tools loaded once (the only module that imports it); ``cpsat``: the
CP-SAT encoding and its phases. ``reach``: the part a problem's required material reaches.
``refusal``: required-material refusals and the priced mandatory closure.
``core_search``: the backend that chains the reduction, the small solvers and CP-SAT
level by level. ``solve``: the chain after the gates, for any backend.
"""
