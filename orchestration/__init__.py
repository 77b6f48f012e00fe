"""Dagster wiring for EnvFoundry: definitions, resources, partitions, IO, jobs, and the CLI."""
