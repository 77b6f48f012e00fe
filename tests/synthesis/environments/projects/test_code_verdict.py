"""The code-tests verdict of a project folder's state (synthesis.environments.workspace_code
`_CODE_TESTS_DUMPER`), in the sandbox: while the code's folder is what the state seeded, the
verdict is the one that state carried and the tests are not run; any change to that folder
runs them, and what they say is the verdict. A folder's code as seeded fails its own tests,
and a usercustomize.py in the workspace (the commands' HOME) cannot make a run pass."""

from __future__ import annotations

import copy

import pytest

from sandboxes import EnvSource, WorkerPool
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.build import environment_code
from synthesis.environments.projects.code_project import PASSED, ROOT, STATE_KEY
from synthesis.environments.projects.folder import project_folder
from tests.shard_support import first_topic

# A usercustomize.py that turns the verification's last line ("failed") into its marker.
MARKER_PRINTER = (
    "import builtins\n"
    "_print = builtins.print\n"
    "builtins.print = lambda *a, **k: "
    f"_print({PASSED!r}) if a == ('failed',) else _print(*a, **k)\n"
)


@pytest.fixture(scope="module")
def folder():
    spec = build_project_spec(first_topic("project"))
    project = project_folder(spec.workspace, 0)
    return EnvSource(code=environment_code(spec)), project


def write(path: str, text: str) -> tuple[str, dict]:
    return ("write", {"path": path, "text": text})


def run(command: str) -> tuple[str, dict]:
    return ("run", {"command": command, "timeout_s": 10})


def test_the_verdict_follows_the_code(folder):
    source, project = folder
    code = project.parts["code_project"]
    module = code.module_path(code.bug.module)
    seeded = {"__workspace__": copy.deepcopy(project.tree())}
    touched = project.files[module] + "\n# looked at\n"
    user_site = (
        "site=$(python3 -c 'import site; print(site.getusersitepackages())') && "
        'mkdir -p "$site" && cat > "$site/usercustomize.py" <<\'PY\'\n'
        f"{MARKER_PRINTER}PY\n"
        # Proof that the file works where the user site is read: an interpreter without -s.
        "python3 -c 'print(\"failed\")'"
    )
    episodes = {
        "nothing": (seeded, []),
        # The code as seeded, touched so the tests run: its bug fails them.
        "the bug kept, a comment added": (seeded, [write(module, touched)]),
        "the fix": (seeded, [write(module, code.right_module())]),
        "a usercustomize.py, the code touched": (seeded, [run(user_site), write(module, touched)]),
        # A link is a change even to the right text: the tests run, through it, and pass.
        "the module made a link to a fixed copy": (
            seeded,
            [
                write("notes/fixed.py", code.right_module()),
                run(f"mv notes/fixed.py /tmp/fixed.py && ln -sf /tmp/fixed.py {module}"),
            ],
        ),
        # What the state says of code left alone is taken, not run again (here a state that
        # says its buggy code passes: what a run would not say).
        "a state that says its seeded code passes, nothing done": (
            {**seeded, STATE_KEY: "passing"},
            [],
        ),
    }
    with WorkerPool(2) as pool:
        fixed = pool.run_episodes([(source, seeded, [write(module, code.right_module())])])[0]
        assert fixed.final_state.get(STATE_KEY) == "passing"
        # A state whose code passes, as a fixed folder's final state reports it: kept while the
        # code is left alone, lost when the bug comes back.
        passing = copy.deepcopy(fixed.final_state)
        episodes["a passing state, nothing done"] = (passing, [])
        episodes["a passing state, the bug put back"] = (
            passing,
            [write(module, project.files[module])],
        )
        labels = list(episodes)
        results = pool.run_episodes([(source, state, calls) for state, calls in episodes.values()])
    verdicts = {}
    for label, result in zip(labels, results, strict=True):
        assert result.status == "ok", (label, result.reason)
        assert all(r.ok for r in result.results), (label, result.results)
        verdicts[label] = result.final_state.get(STATE_KEY)
    assert verdicts == {
        "nothing": None,
        "the bug kept, a comment added": None,
        "the fix": "passing",
        "a usercustomize.py, the code touched": None,
        "the module made a link to a fixed copy": "passing",
        "a state that says its seeded code passes, nothing done": "passing",
        "a passing state, nothing done": "passing",
        "a passing state, the bug put back": None,
    }
    # The usercustomize.py was live for an interpreter that reads the user site.
    attack = results[labels.index("a usercustomize.py, the code touched")]
    assert attack.results[0].result["data"]["output"].strip().endswith(PASSED)
    # Only the verdicts' runs leave nothing behind in the code's folder.
    for result in results:
        dirs = result.final_state["__workspace__"]["dirs"]
        assert not any("__pycache__" in d for d in dirs if d.startswith(ROOT))
