#!/usr/bin/env bash
# Installs the AI clients whose own commands check `moat client register` (test/integration/clients/)
# once per machine from the npm registry, each pinned and in its own directory:
#   ~/.cache/moat-test/clients/<package>@<version>/node_modules/.bin/<command>
# Does nothing for a client already installed. Installs in a temp dir and renames, so an
# interrupted install leaves no half tree. Needs the Node 24 of scripts/setup.sh on PATH.
set -euo pipefail
# package@version  command  (the versions the tests were written against; bump together with them)
CLIENTS=(
  "@anthropic-ai/claude-code@2.1.332 claude"
  "@openai/codex@0.171.0 codex"
  "@google/gemini-cli@0.61.0 gemini"
  "opencode-ai@1.18.33 opencode"
  "@qwen-code/qwen-code@0.24.4 qwen"
)
root="${XDG_CACHE_HOME:-$HOME/.cache}/moat-test/clients"
mkdir -p "$root"
for entry in "${CLIENTS[@]}"; do
  read -r spec command <<<"$entry"
  dir="$root/${spec//\//+}"
  if [[ -x "$dir/node_modules/.bin/$command" ]]; then continue; fi
  echo "client-clis: installing $spec (once per machine)" >&2
  work="$(mktemp -d "$root/.install.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  start=$SECONDS
  (cd "$work" && echo '{"private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error --omit=dev "$spec" >&2)
  rm -rf "$dir"
  mv "$work" "$dir"
  trap - EXIT
  echo "client-clis: $spec ready in $dir ($(du -sh "$dir" | cut -f1), $((SECONDS - start)) s)" >&2
done
