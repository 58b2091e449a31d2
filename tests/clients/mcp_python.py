"""Drives `andon mcp` with the official Python MCP SDK (`pip install mcp`), as another real client
would: the tool names, documents equal to the command line's, errors, status, and a loop step.

Usage: python3 tests/clients/mcp_python.py PATH/TO/andon
Exits non-zero, saying what differed, when a check fails.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = {"index", "query", "stream", "why", "check", "status", "loop", "packet", "propose", "verify"}
DECISIONS = {"authorize", "defer", "skip", "override", "confirm"}

FILES = {
    "pyproject.toml": '[project]\nname = "shopkit"\nversion = "0.1.0"\n',
    ".gitignore": "analysis/\n",
    "andon.toml": '[[contract]]\nname = "catalog stays below shop"\nkind = "layers"\nlayers = ["shop", "catalog"]\n',
    "catalog/__init__.py": 'from catalog.prices import price_of\n\n__all__ = ["price_of"]\n',
    "catalog/prices.py": 'PRICES = {"apple": 3}\n\n\ndef price_of(name):\n    return PRICES[name]\n',
    "shop/__init__.py": "",
    "shop/cart.py": "from catalog import total_of\n\n\ndef cart_total(items):\n    return total_of(items)\n",
}


def repository(root):
    for path, text in FILES.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", root]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "base"], check=True)


def expect(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what.split("\n")[0][:100])


async def drive(andon, root):
    params = StdioServerParameters(command=andon, args=["mcp", root])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            expect(TOOLS <= names and not (DECISIONS & names), f"the tools: {sorted(names)}")
            status = await s.call_tool("status", {})
            expect(status.structured_content["never_run"] is True, "status before any loop has never_run: true")
            q = await s.call_tool("query", {"query": "Wire(p, c)"})
            expect(not q.is_error and "rows" in q.structured_content, f"query has rows: {q.structured_content}")
            cli = subprocess.run([andon, "stream", root, "--format", "json", "-q"], capture_output=True, text=True)
            stream = await s.call_tool("stream", {})
            expect(stream.structured_content["stages"] == json.loads(cli.stdout)["stages"], "stream's stages equal the command's")
            why = await s.call_tool("why", {"from": "shop", "to": "catalog"})
            expect(why.structured_content["found"] is True, "why has found")
            bad = await s.call_tool("query", {"query": "Wyre(p, c)"})
            expect(bad.is_error and "Wire" in bad.content[0].text, f"a bad query is isError naming Wire: {bad.content[0].text}")
            check = await s.call_tool("check", {})
            expect(not check.is_error and check.structured_content["verdict"]["outcome"] == "pass", "check passes")
            step = await s.call_tool("loop", {})
            expect(step.structured_content["next"]["action"] == "propose", f"loop's next.action is propose: {step.structured_content['next']}")
            try:
                await s.call_tool("authorize", {"gap": step.structured_content["next"]["gap"]})
                expect(False, "authorize is refused")
            except Exception as e:
                expect("person" in str(e), f"authorize is a JSON-RPC error: {e}")
            resources = {str(r.uri) for r in (await s.list_resources()).resources}
            expect({"andon://ledger.md", "andon://status.md"} <= resources, f"resources: {resources}")


def main():
    andon = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as root:
        repository(root)
        asyncio.run(drive(andon, root))
    print("the Python MCP SDK drove andon mcp: every check passed")


if __name__ == "__main__":
    main()
