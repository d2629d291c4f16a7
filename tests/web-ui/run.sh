#!/usr/bin/env bash
# The RM's web UI in a real browser: installs Debian's chromium when it is missing, then runs
# check.py (fairloom up with apps in two queues; each page loaded headless, its DOM checked
# against the REST API; screenshots in target/web-ui/). Usage: run.sh PATH/TO/fairloom
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:?usage: run.sh PATH/TO/fairloom}"
if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
exec python3 "$here/check.py" "$bin" "${FAIRLOOM_WEB_UI_OUT:-$here/../../target/web-ui}"
