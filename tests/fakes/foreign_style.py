"""A foreign-style environment (BFCL multi-turn backends' shape): state comes from
`_load_scenario(config)`, and the state graph has parent links, i.e. reference cycles.
"""

from copy import deepcopy

DEFAULT_STATE = {"root": {"name": "home", "children": {"notes.txt": "hello"}}, "owner": "alex"}


class Node:
    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent
        self.children = {}
        self._inode = id(self)


class FolderSystem:
    def __init__(self):
        self.root = None
        self.owner = None
        self._cwd = None

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        config = deepcopy(DEFAULT_STATE)
        config.update(scenario)
        self.owner = config["owner"]
        self.root = self._build(config["root"], None)
        self._cwd = self.root

    def _build(self, spec, parent):
        node = Node(spec["name"], parent)
        for name, child in spec.get("children", {}).items():
            node.children[name] = self._build(child, node) if isinstance(child, dict) else child
        return node

    def mkdir(self, dir_name: str) -> dict:
        """Make a directory in the current directory."""
        if dir_name in self._cwd.children:
            return {"error": f"mkdir: cannot create directory '{dir_name}': File exists"}
        self._cwd.children[dir_name] = Node(dir_name, self._cwd)
        return {}

    def ls(self) -> dict:
        """List the current directory."""
        return {"current_directory_content": sorted(self._cwd.children)}
