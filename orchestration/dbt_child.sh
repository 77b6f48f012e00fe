#!/bin/sh
# dbt, killed with the build that started it: PR_SET_PDEATHSIG through util-linux setpriv, so
# a build killed with SIGKILL cannot leave dbt writing a warehouse behind it.
dbt="${ENVFOUNDRY_DBT:-dbt}"
if command -v setpriv >/dev/null 2>&1; then
    exec setpriv --pdeathsig KILL -- "$dbt" "$@"
fi
exec "$dbt" "$@"
