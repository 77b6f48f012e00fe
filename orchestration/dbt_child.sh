#!/bin/sh
# dbt, killed with the build that started it: PR_SET_PDEATHSIG through util-linux setpriv, so
# a build killed with SIGKILL cannot leave dbt writing a warehouse behind it.
# ENVFOUNDRY_DBT_CWD: the directory dbt runs in, where the profile's relative warehouse path
# points (assets/dbt.py says why the path is relative).
dbt="${ENVFOUNDRY_DBT:-dbt}"
if [ -n "${ENVFOUNDRY_DBT_CWD:-}" ]; then
    cd "$ENVFOUNDRY_DBT_CWD" || exit 2
fi
if command -v setpriv >/dev/null 2>&1; then
    exec setpriv --pdeathsig KILL -- "$dbt" "$@"
fi
exec "$dbt" "$@"
