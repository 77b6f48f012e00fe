"""EnvFoundry's synthesis engine: plain Python that turns topics into verified training worlds.

Nothing in this package imports Dagster; it is usable from a notebook or a script.
"""
