"""The inspector: what a compilation selected, what it kept out and why, and what a
different request would have given.

Modules: ``derive`` (derived requests: the questions as requests), ``limits`` (a
time limit per figure and overall), ``budgets`` (the smallest budget whose optimal
bundle admits an identity), ``figures`` and ``counterfactuals`` (exact answers with
their proof status). Everything here drives ``assemble()``; nothing here solves.
"""
