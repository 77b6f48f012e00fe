"""A hostile environment that never finishes loading: the loop runs at import time."""

while True:
    pass


class NeverLoads:
    def tool(self) -> dict:
        return {"success": True}
