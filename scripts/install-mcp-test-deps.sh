#!/usr/bin/env bash
# Installs the MCP servers the MCP tests run, into target/test-deps (idempotent, ~20 s the first
# time, instant after). The tests find them there, or via GD_TEST_MCP_PYTHON / GD_TEST_MCP_EVERYTHING.
#   target/test-deps/venv-mcp   python venv with mcp==2.3.0 (runs tests/fixtures/mcp/*.py)
#   target/test-deps/mcp-node   @modelcontextprotocol/server-everything@2026.8.31
# Needs python3 with the venv module (Debian: python3-venv) and npm.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/target/test-deps"
mcp_version=2.3.0
everything_version=2026.8.31
venv="$deps/venv-mcp"
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$mcp_version')" 2>/dev/null; then
  echo "Installing the python MCP SDK $mcp_version into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$mcp_version"
fi
node_dir="$deps/mcp-node"
everything="$node_dir/node_modules/@modelcontextprotocol/server-everything"
if ! grep -q "\"version\": \"$everything_version\"" "$everything/package.json" 2>/dev/null; then
  echo "Installing @modelcontextprotocol/server-everything@$everything_version into $node_dir"
  mkdir -p "$node_dir"
  npm install --prefix "$node_dir" --no-audit --no-fund --silent \
    "@modelcontextprotocol/server-everything@$everything_version"
fi
