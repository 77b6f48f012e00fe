"""The one exception the sandbox raises to its callers: misuse or a broken host, never env code.

Misbehaving environment code is not an exception for the caller: it becomes an error record
(`CallResult.ok is False`) or a session status ("killed", "error").
"""


class SandboxError(RuntimeError):
    """Bad arguments, an unavailable backend, or a worker that could not be started."""
