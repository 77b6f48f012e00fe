"""Project folders: workspaces whose files hold a team's real work (issue 41).

`folder.project_folder` makes one topic's folder for one seed: its ledgers (`ledgers`) and
the further parts a project has beside them, each made by its own module from its own
seed. Every part returns its files and, beside them, the truth they were written from, so a
planner (synthesis.tasks.projects) computes what a right answer holds from the same draw.
"""
