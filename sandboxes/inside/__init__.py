"""Code that runs inside the sandbox: stdlib-only modules the worker process loads by path.

Nothing here may import the rest of `sandboxes` (or any third-party package but orjson): the
worker starts with `python -P -s -S` and only these files and orjson are bound into it.
conventions.py is also imported by the parent, as `sandboxes.inside.conventions`.
"""
