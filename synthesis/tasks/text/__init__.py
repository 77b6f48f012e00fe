"""The parts task text is made of: grammar, human-readable values, voices and phrasing banks.

`synthesis.tasks.phrasing.phrase` composes them; nothing here reads more than the words it is
handed, and every choice draws from the rng passed in.
"""
