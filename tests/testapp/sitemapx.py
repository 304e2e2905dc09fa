"""Autodiscovery target: registers nothing, records that it was imported."""

IMPORTED = True
