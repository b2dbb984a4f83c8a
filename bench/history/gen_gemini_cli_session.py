"""Writes a Gemini CLI 0.61-format session recording (.jsonl) of about MB megabytes for WORKSPACE
under HOME/.gemini/tmp/<folder name>/chats: gen_gemini_cli_session.py WORKSPACE HOME MB"""
import json, sys, hashlib, os, random
ws, home, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
h = hashlib.sha256(ws.encode()).hexdigest()
# Gemini CLI 0.61 names the project temp dir after the folder (~/.gemini/projects.json).
chats = os.path.join(home, ".gemini/tmp", os.path.basename(ws), "chats"); os.makedirs(chats, exist_ok=True)
path = os.path.join(chats, "session-2026-11-20T10-00-bbbbbbbb.jsonl")
random.seed(1)
words = ["alpha","beta","gamma","delta","kappa","lambda","sigma","omega","theta","zeta"]
with open(path, "w") as f:
    f.write(json.dumps({"sessionId":"bbbbbbbb-0000-4000-8000-000000000000","projectHash":h,"startTime":"2026-11-20T10:00:00.000Z","lastUpdated":"2026-11-20T10:00:00.000Z","kind":"main"})+"\n")
    i = 0; size = 0
    while size < mb * 1_000_000:
        text = " ".join(random.choice(words) for _ in range(800))
        if i % 2 == 0:
            rec = {"id": f"u{i}", "timestamp": "2026-11-20T10:00:00.000Z", "type": "user", "content": [{"text": text}]}
        else:
            rec = {"id": f"g{i}", "timestamp": "2026-11-20T10:00:01.000Z", "type": "gemini", "content": text, "thoughts": [], "tokens": {"input": 100, "output": 100, "cached": 0, "thoughts": 0, "tool": 0, "total": 200}, "model": "gemini-2.5-flash"}
        line = json.dumps(rec) + "\n"; f.write(line); size += len(line); i += 1
        f.write(json.dumps({"$set": {"lastUpdated": "2026-11-20T10:00:02.000Z"}}) + "\n")
print(path, i)
