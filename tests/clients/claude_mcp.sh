#!/bin/sh
# Claude Code's own health check of `andon mcp`: `claude mcp get` must report it connected.
# Usage: tests/clients/claude_mcp.sh PATH/TO/andon PATH/TO/claude
# Runs in a scratch HOME and a scratch repository, so no user configuration is read or written.
set -eu
andon=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
claude=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/repo/pkg"
printf 'def f():\n    return 1\n' > "$work/repo/pkg/__init__.py"
cd "$work/repo"
git init -q . && git -c user.name=t -c user.email=t@t commit -qm base --allow-empty
export HOME="$work/home"
"$claude" mcp add -s local andon -- "$andon" mcp "$work/repo" >/dev/null
out=$("$claude" mcp get andon 2>&1) || true
echo "$out"
case $out in
  *Connected*) echo "claude mcp get: andon mcp is connected" ;;
  *) echo "FAIL: claude mcp get did not report andon mcp connected" >&2; exit 1 ;;
esac
