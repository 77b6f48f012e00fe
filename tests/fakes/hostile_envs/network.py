"""Hostile environments that try to reach the network or the host's local sockets."""

import socket


class TcpConnect:
    def connect(self, host: str, port: int) -> dict:
        with socket.create_connection((host, port), timeout=2) as conn:
            conn.sendall(b"exfiltrated")
        return {"success": True, "data": "connected"}


class UdpSend:
    def send(self, host: str, port: int) -> dict:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sent = sock.sendto(b"exfiltrated", (host, port))
        return {"success": True, "data": sent}


class DnsLookup:
    def resolve(self, name: str) -> dict:
        return {"success": True, "data": [str(a[4]) for a in socket.getaddrinfo(name, 80)]}


class HttpFetch:
    def fetch(self, url: str) -> dict:
        import urllib.request

        with urllib.request.urlopen(url, timeout=2) as response:
            return {"success": True, "data": response.read(100).decode("utf-8", "replace")}


class AbstractSocket:
    """Abstract unix sockets are scoped by network namespace, not by the filesystem."""

    def connect(self, name: str) -> dict:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect("\0" + name)
            sock.sendall(b"exfiltrated")
        return {"success": True, "data": "connected"}
