"""Evaluate any agent (a model behind an OpenAI-compatible endpoint) on a built dataset.

`envfoundry eval` (command.py) plays the published tasks of a home's current dataset
(dataset.py) with the build's own LLM agent, sandbox, simulated user and proven checks
(runner.py), classifies each failure (taxonomy.py), records every episode in
`$ENVFOUNDRY_HOME/evals/evals.duckdb` (store.py: `eval_runs`, `eval_episodes`,
`eval_llm_calls`) and summarises them (summary.py; pass@k and pass^k in metrics.py).
"""
