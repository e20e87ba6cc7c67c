"""A FastMCP 4 server (with fastmcp-tasks) for the bridge tests, over stdio.

`echo` answers at once; `revision` names the protocol revision of the connection it was called on; `steps` reports
`count` progress steps; `slow` takes `ms` milliseconds and runs as a task when the client opts in (the tasks
extension, on Docket: FASTMCP_DOCKET_URL, in memory by default);
`greet` asks the user's name the 2026-07-28 way (it returns an InputRequiredResult and reads the answer from
`ctx.input_responses` when called again); `greet_rev2025_11_25` asks it with `ctx.elicit`, which FastMCP 4
allows on 2025-11-25 connections only. `slow` writes when it starts, ends and is cancelled to stderr, which the bridge logs.
With PORT set it serves Streamable HTTP on 127.0.0.1:PORT at /mcp instead.
"""

import asyncio
import os
import sys

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp_tasks import TasksExtension
from pydantic import BaseModel

mcp = FastMCP("fastmcp4-bridge-test")
mcp.add_extension(TasksExtension(url=os.environ.get("FASTMCP_DOCKET_URL", "memory://bridge-test")))

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class Name(BaseModel):
    name: str


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@mcp.tool
def echo(text: str) -> str:
    """Returns the text unchanged"""
    return text


@mcp.tool
def revision(ctx: Context) -> str:
    """The protocol revision of the connection the call came on"""
    return str(ctx.request_context.protocol_version)


@mcp.tool
async def steps(count: int, ctx: Context) -> str:
    """Reports count progress steps, then returns"""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count)
    return f"{count} steps"


@mcp.tool(task=True)
async def slow(ms: int, tag: str, ctx: Context) -> str:
    """Takes ms milliseconds in four steps, reporting progress (`step i of 4`) after each"""
    note(f"slow started {tag}")
    try:
        for step in range(1, 5):
            await asyncio.sleep(ms / 4000)
            await ctx.report_progress(step, 4, f"step {step} of 4")
    except asyncio.CancelledError:
        note(f"slow cancelled {tag}")
        raise
    note(f"slow finished {tag}")
    return f"slept {ms} ms ({tag})"


@mcp.tool
def greet(ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Asks the user's name, then greets them"""
    answers = ctx.input_responses
    answer = answers.get("name") if answers else None
    if answer is None:
        ask = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message="What is your name?", requested_schema=NAME_SCHEMA)
        )
        return mcp_types.InputRequiredResult(input_requests={"name": ask})
    data = answer.model_dump() if hasattr(answer, "model_dump") else dict(answer)
    if data.get("action") != "accept":
        return "No name, no greeting."
    return f"Hello, {(data.get('content') or {}).get('name')}!"


@mcp.tool
async def greet_rev2025_11_25(ctx: Context) -> str:
    """Asks the user's name with an elicitation request, then greets them"""
    answer = await ctx.elicit("What is your name?", Name)
    if answer.action != "accept":
        return "No name, no greeting."
    return f"Hello, {answer.data.name}!"


if __name__ == "__main__":
    if "PORT" in os.environ:
        mcp.run(transport="http", host="127.0.0.1", port=int(os.environ["PORT"]), show_banner=False)
    else:
        mcp.run(show_banner=False)
