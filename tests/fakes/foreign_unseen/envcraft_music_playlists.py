"""Music playlist service in the style of an EnvCraft sandboxed environment."""
import copy
from typing import Any, Dict, List, Optional

DEFAULT_SCENARIO: Dict[str, Any] = {
    "users": {
        "u_k3j9": {"display_name": "Maya Goldberg", "email": "maya.g@example.net", "tier": "premium", "parental_filter": False},
        "u_p0x2": {"display_name": "Diego Alvarez", "email": "diego.a@example.net", "tier": "free", "parental_filter": False},
        "u_w7r5": {"display_name": "Tom Eriksen", "email": "tom.eriksen@example.net", "tier": "free", "parental_filter": True},
        "u_b4n8": {"display_name": "Leila Haddad", "email": "leila.h@example.net", "tier": "premium", "parental_filter": False},
        "u_q1z6": {"display_name": "Kofi Boateng", "email": "kofi.b@example.net", "tier": "free", "parental_filter": False},
    },
    "tracks": [
        {"id": 1001, "title": "Northern Lights", "artist": "Aurora Fields", "duration_s": 214, "explicit": False},
        {"id": 1002, "title": "Concrete Jungle", "artist": "MC Verse", "duration_s": 187, "explicit": True},
        {"id": 1003, "title": "Slow River", "artist": "The Driftwoods", "duration_s": 305, "explicit": False},
        {"id": 1004, "title": "Paper Planes Again", "artist": "Aurora Fields", "duration_s": 198, "explicit": False},
        {"id": 1005, "title": "Midnight Static", "artist": "Neon Arcade", "duration_s": 242, "explicit": False},
        {"id": 1006, "title": "Loud Mouth", "artist": "MC Verse", "duration_s": 176, "explicit": True},
        {"id": 1007, "title": "Harbour Song", "artist": "The Driftwoods", "duration_s": 263, "explicit": False},
        {"id": 1008, "title": "Pixel Heart", "artist": "Neon Arcade", "duration_s": 221, "explicit": False},
    ],
    "playlists": {
        "pl_8812": {"name": "Morning Run", "owner": "u_k3j9", "track_ids": [1001, 1005, 1008], "collaborators": ["u_b4n8"]},
        "pl_8813": {"name": "Chill Evenings", "owner": "u_k3j9", "track_ids": [1003, 1007], "collaborators": []},
        "pl_8820": {"name": "Road Trip", "owner": "u_p0x2", "track_ids": [1001, 1002, 1003, 1004, 1005], "collaborators": ["u_q1z6"]},
        "pl_8831": {"name": "Homework Focus", "owner": "u_w7r5", "track_ids": [1003], "collaborators": []},
        "pl_8840": {"name": "Gym Hype", "owner": "u_q1z6", "track_ids": [1002, 1006], "collaborators": []},
    },
    "current_user": "u_k3j9",
    "next_playlist_seq": 8841,
}


class MusicPlaylistEnv:
    FREE_TIER_MAX_TRACKS = 5

    def __init__(self) -> None:
        self._load_scenario(DEFAULT_SCENARIO)

    def _load_scenario(self, config: Dict[str, Any]) -> None:
        config = copy.deepcopy(config)
        self.users: Dict[str, dict] = config["users"]
        self.tracks: List[dict] = config["tracks"]
        self.playlists: Dict[str, dict] = config["playlists"]
        self.current_user: Optional[str] = config.get("current_user")
        self.next_playlist_seq: int = config.get("next_playlist_seq", 1)

    def get_env_state(self) -> Dict[str, Any]:
        return copy.deepcopy({"users": self.users, "tracks": self.tracks, "playlists": self.playlists,
                              "current_user": self.current_user, "next_playlist_seq": self.next_playlist_seq})

    def _track(self, track_id: int) -> dict:
        for t in self.tracks:
            if t["id"] == track_id:
                return t
        raise KeyError(f"Track {track_id} does not exist")

    def _editable(self, playlist_id: str) -> dict:
        if self.current_user is None:
            raise PermissionError("Not signed in")
        if playlist_id not in self.playlists:
            raise KeyError(f"Playlist {playlist_id} does not exist")
        pl = self.playlists[playlist_id]
        if self.current_user != pl["owner"] and self.current_user not in pl["collaborators"]:
            raise PermissionError("You cannot edit this playlist")
        return pl

    def switch_user(self, email: str) -> str:
        """Sign in as the user with this email. Returns the user's display name."""
        for uid, u in self.users.items():
            if u["email"] == email.strip().lower():
                self.current_user = uid
                return u["display_name"]
        raise ValueError(f"No user with email {email}")

    def search_tracks(self, query: str) -> List[Dict[str, Any]]:
        """Find tracks whose title or artist contains the query (case-insensitive)."""
        if not query.strip():
            raise ValueError("Query must not be empty")
        q = query.lower()
        return [dict(t) for t in self.tracks if q in t["title"].lower() or q in t["artist"].lower()]

    def get_playlist(self, playlist_id: str) -> Dict[str, Any]:
        """Return a playlist with its track titles and total duration in seconds."""
        if playlist_id not in self.playlists:
            raise KeyError(f"Playlist {playlist_id} does not exist")
        pl = self.playlists[playlist_id]
        tracks = [self._track(t) for t in pl["track_ids"]]
        return {"playlist_id": playlist_id, "name": pl["name"], "owner": self.users[pl["owner"]]["display_name"],
                "tracks": [t["title"] for t in tracks], "total_duration_s": sum(t["duration_s"] for t in tracks)}

    def create_playlist(self, name: str) -> str:
        """Create an empty playlist owned by the signed-in user. Names must be unique per owner. Returns its id."""
        if self.current_user is None:
            raise PermissionError("Not signed in")
        name = name.strip()
        if not name:
            raise ValueError("Playlist name must not be empty")
        if any(p["owner"] == self.current_user and p["name"].lower() == name.lower() for p in self.playlists.values()):
            raise ValueError(f"You already have a playlist named {name!r}")
        pid = f"pl_{self.next_playlist_seq}"
        self.next_playlist_seq += 1
        self.playlists[pid] = {"name": name, "owner": self.current_user, "track_ids": [], "collaborators": []}
        return pid

    def add_track(self, playlist_id: str, track_id: int) -> int:
        """Append a track. No duplicates; explicit tracks are blocked by the signed-in user's parental filter;
        playlists owned by free-tier users hold at most 5 tracks. Returns the new track count."""
        pl = self._editable(playlist_id)
        track = self._track(track_id)
        if track_id in pl["track_ids"]:
            raise ValueError("Track already in playlist")
        if track["explicit"] and self.users[self.current_user]["parental_filter"]:
            raise PermissionError("Explicit content is blocked for this account")
        if self.users[pl["owner"]]["tier"] == "free" and len(pl["track_ids"]) >= self.FREE_TIER_MAX_TRACKS:
            raise ValueError("Free-tier playlists are limited to 5 tracks")
        pl["track_ids"].append(track_id)
        return len(pl["track_ids"])

    def remove_track(self, playlist_id: str, track_id: int) -> int:
        """Remove a track from a playlist. Returns the new track count."""
        pl = self._editable(playlist_id)
        if track_id not in pl["track_ids"]:
            raise ValueError("Track not in playlist")
        pl["track_ids"].remove(track_id)
        return len(pl["track_ids"])

    def move_track(self, playlist_id: str, track_id: int, new_position: int) -> List[int]:
        """Move a track to a 0-based position. Returns the new order of track ids."""
        pl = self._editable(playlist_id)
        if track_id not in pl["track_ids"]:
            raise ValueError("Track not in playlist")
        if not 0 <= new_position < len(pl["track_ids"]):
            raise IndexError("Position out of range")
        pl["track_ids"].remove(track_id)
        pl["track_ids"].insert(new_position, track_id)
        return list(pl["track_ids"])

    def add_collaborator(self, playlist_id: str, email: str) -> List[str]:
        """Owner only: let another user edit the playlist. Returns collaborator display names."""
        pl = self._editable(playlist_id)
        if pl["owner"] != self.current_user:
            raise PermissionError("Only the owner can add collaborators")
        uid = next((k for k, u in self.users.items() if u["email"] == email.strip().lower()), None)
        if uid is None:
            raise KeyError(f"No user with email {email}")
        if uid == pl["owner"] or uid in pl["collaborators"]:
            raise ValueError("User already has access")
        pl["collaborators"].append(uid)
        return [self.users[c]["display_name"] for c in pl["collaborators"]]

    def delete_playlist(self, playlist_id: str) -> None:
        """Owner only: delete a playlist."""
        pl = self._editable(playlist_id)
        if pl["owner"] != self.current_user:
            raise PermissionError("Only the owner can delete a playlist")
        del self.playlists[playlist_id]
