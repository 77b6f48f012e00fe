"""Partitions: per-environment stages are partitioned by environment id, added as specs land."""

from __future__ import annotations

import dagster as dg

environment_partitions = dg.DynamicPartitionsDefinition(name="environments")
