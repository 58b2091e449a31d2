#!/bin/sh
# Claude Code PreToolUse hook on the shell tool: denies a command that runs one of andon's
# person's decisions (authorize, defer, skip, override, confirm). Those record that a person
# decided; the agent asks the person instead. andon itself refuses them without a terminal where
# the gap id is typed back (an agent's shell has none); this hook says so before the call runs.
# It reads the hook input on standard input and needs only sh.

input=$(cat)
# the decision subcommand after `andon` (a path or `andon.exe` too), past any leading options
if printf '%s' "$input" | grep -Eq '(^|[^[:alnum:]_.-])andon(\.exe)?[[:space:]]+(-[^[:space:]]*[[:space:]]+)*(authorize|defer|skip|override|confirm)([^[:alnum:]_-]|$)'; then
  cat <<'JSON'
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"andon's decisions (authorize, defer, skip, override, confirm) belong to the person: they are recorded only at a terminal where the person types the gap id back, and an agent's shell has none. Tell the person the exact command with the gap id, what it would allow and what you recommend, and stop."}}
JSON
fi
exit 0
