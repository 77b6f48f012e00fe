"""The environment player: `envfoundry env run`, `env shell` and `env serve --mcp` run, play
or serve one environment in the sandbox.

The environment is a file or module (`--source`, with `--state FILE`), one a build
published (`--env ENV_ID`, from the warehouse of `--home`'s current dataset, with
`--scenario ID` or `--state-id ID`; default: its first initial state), or the one a task line
of a built RL shard names (`--task rl/SPLIT.jsonl:LINE`, its bundled code and initial state)
(targets.py). A built environment runs exactly as the build ran it: the same source, class,
loader and dumper, and for a scenario the same world (clock and randomness). Code we did not
compile runs only in a real sandbox (bwrap or docker) unless `--backend process` is asked for
by name, as in the build (sandbox.py). Calls are checked against the tool's JSON schema before
they reach the sandbox, so a missing, unexpected or mistyped argument is a usage error naming
the tool and the parameter (arguments.py).

run.py replays calls, shell.py plays by hand, mcp_server.py serves MCP clients; options.py is
what they share: the options, the exit statuses and how a command stops. orchestration.cli
passes each the arguments after `env run` / `env shell` / `env serve`.
"""
