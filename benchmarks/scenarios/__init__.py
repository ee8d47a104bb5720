"""The scenarios the benchmarks and the tests share; the package never imports them.

Input: nothing. Output: ``adversarial`` (the request shapes that make a careless stage
quadratic, and the ``tangled`` preset of the generator), ``agentloop`` (one agent's
model calls as a first request and its deltas) and ``cachesession`` (an agent's calls
with times and re-scored relevance, for the cache benchmark). They build on the
product's request generator (``assembler.hunt.generate``), which the hunts use.
"""
