"""Tasks: plans over the environment model, phrasing, gold runs in the sandbox, and checks."""
