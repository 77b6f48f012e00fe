"""Task families: each module plans one kind of task into a `Planner` (synthesis.tasks.planner).

A family's `plan(planner, graph, initial, max_len)` adds its goals to a fresh planner and
returns an `Outcome` (what the reply must carry, the task's kind), or None when no task of
its kind fits the state. Families are drawn by weight in synthesis.tasks.scenarios, one
`register_family` line each; they import the planner and each other, never the dispatcher.
"""
