#!/usr/bin/python3
"""A second, independent CPP client: runs the core scenarios of the conformance kit against a server.

usage: /usr/bin/python3 conformance/python/cpp_conformance.py ws://host:port [--all] [--only TEXT] [--concurrency N]

Written from docs/PROTOCOL.md and conformance/README.md alone, with Python's standard library and Debian's
python3-websockets, so that the protocol is not only tested by the code that implements it.
"""

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from scenario_run import ScenarioRun

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


async def run_all(scenarios, url, concurrency, timeout):
    limit = asyncio.Semaphore(concurrency)

    async def run(scenario):
        async with limit:
            started = time.monotonic()
            failure = await ScenarioRun(scenario, url, timeout).execute()
            return scenario, failure, time.monotonic() - started

    return await asyncio.gather(*(run(scenario) for scenario in scenarios))


def main() -> int:
    parser = argparse.ArgumentParser(description="Run the CPP conformance kit's core scenarios against a server.")
    parser.add_argument("url", help="ws://host:port, or the full URL of the session endpoint")
    parser.add_argument("--all", action="store_true", help="run every scenario, not only the core ones")
    parser.add_argument("--only", action="append", default=[], help="run only scenarios whose name contains this")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds a step waits for the server")
    options = parser.parse_args()

    scenarios = []
    for path in sorted(SCENARIOS.glob("*.json")):
        scenario = json.loads(path.read_text(encoding="utf-8"))
        scenario["name"] = path.stem
        # Scenarios for a server that proves identities sign with Ed25519 keys, which Python's standard library lacks:
        # this client runs those written for a server taking claimed identities.
        if scenario.get("auth", "claimed") != "claimed":
            continue
        if (options.all or scenario.get("core")) and (not options.only or any(text in path.stem for text in options.only)):
            scenarios.append(scenario)
    print(f"CPP conformance (Python {sys.version.split()[0]}): {len(scenarios)} scenarios against {options.url}\n")
    results = asyncio.run(run_all(scenarios, options.url, options.concurrency, options.timeout))

    width = max(len(scenario["name"]) for scenario, _, _ in results)
    for scenario, failure, seconds in results:
        print(f"  {'pass' if failure is None else 'FAIL':6}  {scenario['name']:{width}}  {seconds:.1f} s")
        if failure is not None:
            print(f"          step {failure[0]}: {failure[1]}")
    failed = sum(1 for _, failure, _ in results if failure is not None)
    print(f"\n{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
