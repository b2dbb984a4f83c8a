#!/usr/bin/env python3
"""A minimal MCP server over stdio: one JSON-RPC message per line.

It offers one tool, `word_count`, so the extension works as soon as it is
linked. Grow it from here, or swap it for a server built on an MCP SDK.
"""
import json
import sys

TOOLS = [
    {
        "name": "word_count",
        "description": "Counts the words, lines and characters of a text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to count."}},
            "required": ["text"],
        },
    }
]


def call_tool(name, args):
    if name != "word_count":
        raise ValueError(f"unknown tool: {name}")
    text = str(args.get("text", ""))
    summary = f"{len(text.split())} words, {len(text.splitlines())} lines, {len(text)} characters"
    return {"content": [{"type": "text", "text": summary}]}


def answer(request):
    method = request.get("method")
    params = request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "words", "version": "1.0.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call_tool(params.get("name"), params.get("arguments") or {})
    raise LookupError(method)


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification (e.g. notifications/initialized)
        reply = {"jsonrpc": "2.0", "id": request["id"]}
        try:
            reply["result"] = answer(request)
        except LookupError as e:
            reply["error"] = {"code": -32601, "message": f"method not found: {e}"}
        except Exception as e:  # a tool's failure is the tool's answer
            reply["result"] = {"content": [{"type": "text", "text": str(e)}], "isError": True}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
