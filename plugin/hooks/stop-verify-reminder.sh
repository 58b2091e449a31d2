#!/bin/sh
# Claude Code Stop hook: when andon's loop has a proposed gap awaiting verification, it blocks the
# stop once with a reminder to verify it. It reads the hook input on standard input and never
# blocks when `stop_hook_active` is true (the agent already continued once because of a Stop
# hook). It needs only sh and `andon` on PATH; when anything is missing or fails, the agent stops.
#
# The repository is $CLAUDE_PROJECT_DIR (set by Claude Code for hooks), else the current
# directory. `andon status` renders its board files under output_dir, so the hook asks for the
# status only where the loop has run: where the ledger named by the settings exists.

input=$(cat | tr -d ' \t\r\n')
case $input in
  *'"stop_hook_active":true'*) exit 0 ;;
  *'"stop_hook_active":false'*) ;;
  # not the hook input Claude Code sends: never block on what cannot be read
  *) exit 0 ;;
esac
command -v andon >/dev/null 2>&1 || exit 0
dir=${CLAUDE_PROJECT_DIR:-.}

# The ledger directory, from `andon config show --format json`: `"ledger_dir": {…, "value": "…"}`.
config=$(andon config show "$dir" --format json 2>/dev/null | tr -d '\n')
rest=${config#*'"ledger_dir": {'}
[ "$rest" != "$config" ] || exit 0
rest=${rest#*'"value": "'}
ledger=${rest%%'"'*}
case $ledger in
  '' | *\\*) exit 0 ;;
  /*) ;;
  *) ledger=$dir/$ledger ;;
esac
[ -f "$ledger/ledger.jsonl" ] || exit 0

# The next step, from `andon status --format json`: `"next": {"action": …, "detail": …, "gap": …}`.
# JSON escapes every quote inside a string, so `"action": "` matches only a key.
status=$(andon status "$dir" --format json 2>/dev/null | tr -d '\n')
next=${status#*'"next": {'}
[ "$next" != "$status" ] || exit 0
action=${next#*'"action": "'}
action=${action%%'"'*}
[ "$action" = apply-and-verify ] || exit 0
gap=${next#*'"gap": "'}
[ "$gap" != "$next" ] || exit 0
gap=${gap%%'"'*}
case $gap in
  '' | *[!A-Za-z0-9_.-]*) exit 0 ;;
esac

printf '{"decision": "block", "reason": "andon: gap %s is proposed and its proof is not recorded yet. Apply the fix within its write-set and run `andon verify --gap %s` (MCP tool `verify`) if you have not (it records the evidence); then run `andon loop`. If you stop here on purpose, tell the person why."}\n' "$gap" "$gap"
