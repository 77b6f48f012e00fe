"""Fast runs: a build's runs forked from a process that has the code location loaded, and its
code server and run host kept warm for the next build.

launcher.py (the instance's run launcher) starts a run host (runhost.py) and asks it for each
run over the lines of wire.py; warm.py keeps a code server and run host up between builds, and
warm_build.py has that run host fork a CLI's whole build. lifeline.py ties every process of a
build to the build process. What this package calls above itself it names (entrypoints.py);
every private Dagster name the project uses is imported in dagster_internals.py.
"""
