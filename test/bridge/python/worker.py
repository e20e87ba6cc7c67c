"""A BullMQ worker written in Python, as a team runs it: it imports only bullmq (and the standard library) and
knows nothing of MCP or taskgate. Arguments: the Redis URL, the key prefix and the queue name.
"""

import asyncio
import sys

from bullmq import Worker


async def render(job, token):
    print(f"ran {job.id} {job.name}", flush=True)
    steps = job.data.get("steps", 0)
    for step in range(1, steps + 1):
        await asyncio.sleep(job.data.get("stepMs", 0) / 1000)
        await job.updateProgress({"current": step, "total": steps, "message": f"page {step} of {steps}"})
    if job.data.get("fail"):
        raise ValueError(f"printer jammed on report {job.data['n']}")
    return {"pages": job.data["n"] * 2}


async def main():
    url, prefix, queue = sys.argv[1:4]
    worker = Worker(queue, render, {"connection": url, "prefix": prefix, "concurrency": 4})
    print("python worker ready", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await worker.close()


if __name__ == "__main__":
    asyncio.run(main())
