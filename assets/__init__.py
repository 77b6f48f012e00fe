"""Thin Dagster assets, one module per stage, each calling the engine in synthesis/."""
