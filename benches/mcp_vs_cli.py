#!/usr/bin/env python3
"""andon mcp against the command line: the same commands as tool calls in one MCP session and as
whole processes, medians of 7 each, on a repository already indexed (`andon index REPO` first).

Usage: benches/mcp_vs_cli.py ANDON REPO [WHY_FROM WHY_TO]   (needs PyPI's mcp: `pip install mcp`)
"""

import asyncio
import statistics
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ANDON, REPO = sys.argv[1], sys.argv[2]
CALLS = [
    ("stream", {}, ["stream"]),
    ("status", {}, ["status"]),
    ("query", {"query": "Wire(p, c)"}, ["query", "Wire(p, c)"]),
]
if len(sys.argv) > 4:
    CALLS.append(("why", {"from": sys.argv[3], "to": sys.argv[4]}, ["why", sys.argv[3], sys.argv[4]]))


def cli(args):
    """Seconds one `andon <command> REPO … --format json` process takes."""
    cmd = [ANDON, args[0], REPO] + args[1:] + ["--format", "json"]
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=False)
    return time.perf_counter() - t


async def main():
    t = time.perf_counter()
    async with stdio_client(StdioServerParameters(command=ANDON, args=["mcp", REPO])) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            print("session start %.1f ms" % ((time.perf_counter() - t) * 1000))
            await s.list_tools()
            for name, args, cargs in CALLS:
                mcp_times, cli_times = [], []
                for _ in range(7):
                    t = time.perf_counter()
                    res = await s.call_tool(name, args)
                    mcp_times.append(time.perf_counter() - t)
                    if res.is_error:
                        sys.exit(f"{name}: {res.content[0].text}")
                    cli_times.append(cli(cargs))
                m, c = statistics.median(mcp_times) * 1000, statistics.median(cli_times) * 1000
                print("%-7s mcp %7.1f ms  cli %7.1f ms  mcp/cli %.2f" % (name, m, c, m / c))


asyncio.run(main())
