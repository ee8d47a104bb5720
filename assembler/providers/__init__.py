"""The providers: one room per provider API, and the figures every room reads.

Input: nothing (importing the package loads nothing: ``facts`` sits below the stated
model, the rooms above it). Output: the subpackages and modules below.

* ``data/<provider>.json``: every figure of a provider, each with its source (models,
  windows and output limits, framing, images, prompt-cache rules and prices, usage
  fields); ``facts`` reads them as typed values (the providers' ground floor).
"""
