#!/bin/sh
# Claude Code PreToolUse hook on the shell tool: denies a command that runs one of andon's
# person's decisions (authorize, defer, skip, override, confirm). Those record that a person
# decided; the agent asks the person instead. andon itself refuses them without a terminal where
# the gap id is typed back (an agent's shell has none); this hook says so before the call runs.
# It reads the hook input on standard input and needs only sh.

input=$(cat)
# a command that names andon (any path, alias or copy of it) and a decision word anywhere: the
# hook errs on the side of the person (an indirection such as `A=andon; $A skip G` is caught too)
if printf '%s' "$input" | grep -q 'andon' \
  && printf '%s' "$input" | grep -Eq '(^|[^[:alnum:]_-]|\\[tn])(authorize|defer|skip|override|confirm)([^[:alnum:]_-]|$)'; then
  cat <<'JSON'
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"andon's decisions (authorize, defer, skip, override, confirm) belong to the person: they are recorded only at a terminal where the person types the gap id back, and an agent's shell has none. Tell the person the exact command with the gap id, what it would allow and what you recommend, and stop."}}
JSON
fi
exit 0
