#!/usr/bin/env python3
"""N Bumble virtual controllers on one local link (bumble.apps.controllers takes exactly two).

Usage: controllers.py tcp-server:127.0.0.1:P1 tcp-server:127.0.0.1:P2 [tcp-server:...:P3 ...]
"""
import asyncio
import sys

from bumble.controller import Controller
from bumble.link import LocalLink
from bumble.transport import open_transport


async def main(specs):
    link = LocalLink()
    transports = []
    for index, spec in enumerate(specs):
        transport = await open_transport(spec)
        transports.append(transport)
        Controller(f'C{index}', host_source=transport.source, host_sink=transport.sink, link=link)
    await asyncio.get_running_loop().create_future()


if __name__ == '__main__':
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    asyncio.run(main(sys.argv[1:]))
