"""Made-up words for values a task asks for (new names, titles, messages): one bank, seeded use.

The order of each tuple is part of what a seed means: tasks are drawn with `rng.choice`, so
reordering or extending a bank changes every build's text.
"""

FIRST_NAMES = (
    "Avery",
    "Blake",
    "Casey",
    "Devon",
    "Emery",
    "Finley",
    "Harper",
    "Jordan",
    "Kai",
    "Logan",
    "Morgan",
    "Quinn",
    "Riley",
    "Sage",
    "Taylor",
    "Rowan",
)
LAST_NAMES = (
    "Abbott",
    "Brennan",
    "Castillo",
    "Dalton",
    "Ellison",
    "Fujita",
    "Garza",
    "Hale",
    "Ibarra",
    "Jensen",
    "Kowalski",
    "Lindqvist",
    "Moreau",
    "Nakamura",
    "Okoye",
    "Pryce",
)
WORDS = (
    "amber",
    "cedar",
    "harbor",
    "maple",
    "north",
    "orchid",
    "silver",
    "summit",
    "willow",
    "coral",
    "granite",
    "meadow",
)
NOUNS = ("notes", "plan", "report", "draft", "budget", "summary", "agenda", "ideas")
