"""Loopback sinks for bench/webhooks.sh: an SMTP server that accepts every message and an
HTTP server that answers 204 to every POST, both on 127.0.0.1. Prints "SMTP_PORT HTTP_PORT"
on its first line, then, on SIGTERM, the number of mails and HTTP requests it took.

The SMTP side speaks just what the notifier's mailer uses (EHLO, MAIL, RCPT, DATA, RSET,
NOOP, QUIT); the HTTP side keeps connections alive (HTTP/1.1), as a real receiver would.
"""
import asyncio
import signal
import sys

counts = {"mail": 0, "http": 0}


async def smtp(reader, writer):
    writer.write(b"220 sink ESMTP\r\n")
    while True:
        line = await reader.readline()
        if not line:
            break
        verb = line[:4].upper()
        if verb in (b"EHLO", b"HELO"):
            writer.write(b"250-sink\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n")
        elif verb == b"DATA":
            writer.write(b"354 go on\r\n")
            await writer.drain()
            await reader.readuntil(b"\r\n.\r\n")
            counts["mail"] += 1
            writer.write(b"250 queued\r\n")
        elif verb == b"QUIT":
            writer.write(b"221 bye\r\n")
            await writer.drain()
            break
        else:
            writer.write(b"250 ok\r\n")
        await writer.drain()
    writer.close()


async def http(reader, writer):
    while True:
        head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
        if not head:
            break
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        await reader.readexactly(length)
        counts["http"] += 1
        writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
    writer.close()


async def main():
    async def guard(handler, r, w):
        try:
            await handler(r, w)
        except (asyncio.IncompleteReadError, ConnectionError):
            w.close()

    s = await asyncio.start_server(lambda r, w: guard(smtp, r, w), "127.0.0.1", 0)
    h = await asyncio.start_server(lambda r, w: guard(http, r, w), "127.0.0.1", 0)
    print(s.sockets[0].getsockname()[1], h.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    print(counts["mail"], counts["http"], flush=True)


asyncio.run(main())
sys.exit(0)
