#!/usr/bin/env bash
# Installs the unmodified official Backend.AI client (PyPI backend.ai-client==26.9.6) and its
# integration suite (backend.ai-test==26.9.6, which drives the CLI through pexpect) into
# .venv-official with Python 3.13 (pyenv's 3.13.0), once. The e2e tests drive both.
# blessed is pinned to 1.20.0: newer ones query the terminal under a pty and stall every
# pexpect step (wire reference §8 A).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-official
want="backend.ai-client==26.9.6 backend.ai-test==26.9.6 pexpect blessed==1.20.0"
if [ -x "$venv/bin/backend.ai" ] && [ -f "$venv/.installed" ] && [ "$(cat "$venv/.installed")" = "$want" ]; then
  exit 0
fi
py=""
for c in "${PYTHON313:-}" "$HOME/.pyenv/versions/3.13.0/bin/python3.13" "$(command -v python3.13 || true)"; do
  if [ -n "$c" ] && [ -x "$c" ]; then py="$c"; break; fi
done
if [ -z "$py" ] && command -v pyenv >/dev/null 2>&1; then
  py="$(PYENV_VERSION=3.13.0 pyenv which python3.13 2>/dev/null || true)"
fi
[ -n "$py" ] || { echo "error: Python 3.13 is needed for the official client (pyenv install 3.13.0)" >&2; exit 1; }
echo "==> installing the official client ($want) with $py"
rm -rf "$venv"
"$py" -m venv "$venv"
# shellcheck disable=SC2086
"$venv/bin/pip" install -q --disable-pip-version-check $want
echo "$want" > "$venv/.installed"
