"""Exports: warehouse tables and training shards."""
