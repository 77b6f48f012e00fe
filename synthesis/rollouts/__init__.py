"""Rollouts: policies playing published tasks in the sandbox, recorded as chats."""
