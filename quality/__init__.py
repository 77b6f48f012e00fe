"""Quality gates: Great Expectations suites, check self-tests, environment audit, reports."""
