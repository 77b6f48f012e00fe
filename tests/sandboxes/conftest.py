"""Fixtures for the sandbox tests: the backends to parametrize over."""

from __future__ import annotations

import pytest
from sandbox_helpers import backend_params


@pytest.fixture(params=backend_params())
def backend(request) -> str:
    return request.param


@pytest.fixture(params=backend_params(("bwrap", "docker")))
def isolating_backend(request) -> str:
    """Backends that promise isolation (the process backend only promises rlimits)."""
    return request.param
