#!/usr/bin/env bash
# The real yarn-api-client (PyPI, 1.0.3) against a running `fairloom up`: installs the client
# in a virtualenv of its own, then runs test_client.py. Usage: run.sh PATH/TO/fairloom
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:?usage: run.sh PATH/TO/fairloom}"
venv="${FAIRLOOM_VENV:-$here/../../target/yarn-api-client-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "yarn-api-client==1.0.3"
exec "$venv/bin/python" "$here/test_client.py" "$bin"
