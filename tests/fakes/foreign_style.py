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


class ConfigDesk:
    """EnvScaler style: the whole initial state arrives as one optional config dict."""

    def __init__(self, init_config: dict | None = None):
        config = init_config or {}
        self.tickets = dict(config.get("tickets", {"T-1": "open"}))
        self.agent = config.get("agent", "nobody")

    def close(self, ticket_id: str) -> dict:
        """Close a ticket."""
        self.tickets[ticket_id] = "closed"
        return {"success": True, "data": self.agent}


class Shelf:
    """Plain constructor arguments, one of them required."""

    def __init__(self, owner: str, capacity: int = 3):
        self.owner = owner
        self.capacity = capacity
        self.books = []

    def add(self, title: str) -> dict:
        """Put a book on the shelf."""
        if len(self.books) >= self.capacity:
            return {"success": False, "error": "shelf full"}
        self.books.append(title)
        return {"success": True, "data": len(self.books)}


class Settings:
    """Everything through **kwargs: only an explicit "constructor" loader passes it."""

    def __init__(self, **options):
        self.options = options

    def get(self, key: str) -> dict:
        """Read one setting."""
        return {"success": True, "data": self.options.get(key)}


class Ledger:
    """State kept privately and handed out by get_state(), in types JSON does not have."""

    def __init__(self):
        self._entries = {}

    def add(self, name: str, amount: str) -> dict:
        """Record an amount."""
        from decimal import Decimal

        self._entries[name] = Decimal(amount)
        return {"success": True}

    def get_state(self) -> dict:
        from datetime import date

        return {"entries": dict(self._entries), "names": set(self._entries), "on": date(2026, 3, 2)}

    def snapshot(self):
        return {"count": len(self._entries)}

    def get_env_state(self, verbose: bool) -> dict:
        return {"verbose": verbose}


class ListDumper:
    """A dumper whose result is not an object."""

    def __init__(self):
        self.items = [1, 2]

    def dump_state(self) -> list:
        return self.items

    def export_state(self) -> dict:
        raise RuntimeError("ledger locked")
