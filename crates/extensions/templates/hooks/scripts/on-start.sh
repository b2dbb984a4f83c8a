#!/bin/sh
# SessionStart: the event's JSON arrives on standard input (not needed here).
# What this prints on standard output is the hook's answer: its
# additionalContext reaches the model with the first message.
cat >/dev/null
branch=$(git -C "${GEMINI_PROJECT_DIR:-.}" branch --show-current 2>/dev/null)
[ -n "$branch" ] || branch="(not a git repository)"
printf '{"hookSpecificOutput":{"additionalContext":"The session started on branch %s."}}\n' "$branch"
