"""Code that runs inside the sandbox: stdlib-only modules the worker process loads by path.

Nothing here may import the rest of `sandboxes` (or any third-party package but orjson): the
worker starts with `python -I -S` and only these files and orjson are bound into it.
"""
