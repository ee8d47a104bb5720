"""The stated model in code: what a request and a result are.

Input: nothing. Output: the value types (``types``), the exception hierarchy
(``errors``), the request parser and validator (``parse``: JSON -> ``Request``) and
the objective's arithmetic (``objective``: value and tie-break weight of a form).

This layer is the bottom of the package: it imports nothing else from it and knows
nothing of gates, strategies or solvers. ``models/README.md`` is its normative text.
"""
