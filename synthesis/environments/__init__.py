"""Environments: specs, compiled and foreign classes, initial states, and their model."""
