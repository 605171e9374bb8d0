"""STOMP over WebSocket at ``/stomp``: the TCP listener's connection behind an aiohttp WebSocket —
frames (several per message, or one split over messages), subprotocols, heart-beats, security,
limits — and ``/metrics``, in-process and from a ``jms broker --http-port`` process."""

from __future__ import annotations

import asyncio
import random
import re
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from jms.broker.security import Security, hash_password
from jms.message import BytesMessage, Queue
from jms.stomp import FrameLimits, HeartBeatOffer
from jms.stomp.server import StompServer
from tests.stomp.serving import RawClient, broker_process, stop_process
from tests.web.serving import WebSocketStomp, served_http

Scenario = Callable[[StompServer, str, aiohttp.ClientSession], Awaitable[None]]


def _run(
    scenario: Scenario, allowed_origins: tuple[str, ...] = (), **server_options: object
) -> None:
    async def main() -> None:
        async with (
            served_http(allowed_origins, **server_options) as (stomp, http),
            aiohttp.ClientSession() as session,
        ):
            await scenario(stomp, http.url, session)

    asyncio.run(main())


async def _client(session: aiohttp.ClientSession, url: str) -> WebSocketStomp:
    websocket = await session.ws_connect(f"{url}/stomp", protocols=("v12.stomp",))
    return WebSocketStomp(websocket)


def test_a_websocket_client_sends_subscribes_with_a_selector_and_acknowledges() -> None:
    async def scenario(stomp: StompServer, url: str, session: aiohttp.ClientSession) -> None:
        client = await _client(session, url)
        assert client.websocket.protocol == "v12.stomp"
        connected = await client.connect()
        assert connected.command == "CONNECTED" and connected.header("version") == "1.2"
        await client.send(
            "SUBSCRIBE",
            {
                "destination": "/queue/orders",
                "id": "s",
                "ack": "client-individual",
                "selector": "color = 'red'",
            },
        )
        # Two SENDs and a receipt request in one WebSocket message.
        await client.websocket.send_bytes(
            client.encode("SEND", {"destination": "/queue/orders", "color": "blue"}, b"blue")
            + client.encode("SEND", {"destination": "/queue/orders", "color": "red"}, b"red")
            + client.encode("SEND", {"destination": "/queue/other", "receipt": "r1"}, b"x")
        )
        frames = [await client.read(), await client.read()]
        message = next(f for f in frames if f.command == "MESSAGE")
        assert message.body == b"red" and message.header("color") == "red"
        assert any(f.command == "RECEIPT" and f.header("receipt-id") == "r1" for f in frames)
        ack = message.header("ack")
        assert ack is not None
        await client.send("ACK", {"id": ack, "receipt": "r2"})
        assert (await client.read()).header("receipt-id") == "r2"
        depths = {s.name: s.depth for s in stomp.broker.stats()}
        assert depths["queue://orders"] == 1  # the blue one, left by the selector
        await client.send("DISCONNECT", {"receipt": "bye"})
        assert (await client.read()).header("receipt-id") == "bye"
        assert await client.closed_by_server()

    _run(scenario)


def test_a_frame_split_over_messages_and_a_binary_body_cross_intact() -> None:
    async def scenario(stomp: StompServer, url: str, session: aiohttp.ClientSession) -> None:
        client = await _client(session, url)
        await client.connect()
        await client.send("SUBSCRIBE", {"destination": "/queue/bin", "id": "s"})
        body = bytes(range(256)) * 4  # NUL bytes and bytes that are not UTF-8
        data = client.encode(
            "SEND", {"destination": "/queue/bin", "content-length": str(len(body))}, body
        )
        for start in range(0, len(data), 100):
            await client.websocket.send_bytes(data[start : start + 100])
        message = await client.read()
        assert message.command == "MESSAGE" and message.body == body
        # Text when the frame is UTF-8 (CONNECTED), binary when it is not.
        assert client.message_kinds == [aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY]

    _run(scenario)


def test_tcp_and_websocket_clients_share_the_broker() -> None:
    async def scenario(stomp: StompServer, url: str, session: aiohttp.ClientSession) -> None:
        client = await _client(session, url)
        await client.connect()
        await client.send("SUBSCRIBE", {"destination": "/topic/news", "id": "s", "receipt": "sub"})
        assert (await client.read()).command == "RECEIPT"

        def over_tcp() -> None:
            with RawClient(stomp.port) as raw:
                raw.connect()
                raw.send(
                    "SEND", {"destination": "/topic/news", "color": "red", "receipt": "r"}, b"hi"
                )
                assert raw.read().command == "RECEIPT"

        await asyncio.get_running_loop().run_in_executor(None, over_tcp)
        message = await client.read()
        assert message.body == b"hi" and message.header("color") == "red"
        async with session.get(f"{url}/metrics") as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/plain")
            text = await response.text()
        assert "jms_stomp_connections_total 2.0" in text
        assert 'jms_stomp_frames_received_total{command="SUBSCRIBE"} 1.0' in text

    _run(scenario)


def test_websocket_logins_are_checked_as_over_tcp() -> None:
    security = Security.from_mapping({"users": {"alice": {"password": hash_password("secret")}}})

    async def scenario(stomp: StompServer, url: str, session: aiohttp.ClientSession) -> None:
        refused = await _client(session, url)
        error = await refused.connect(login="alice", passcode="wrong")
        assert error.command == "ERROR"
        assert "login 'alice' refused: wrong user name or password" in (
            error.header("message") or ""
        )
        assert await refused.closed_by_server()
        admitted = await _client(session, url)
        assert (await admitted.connect(login="alice", passcode="secret")).command == "CONNECTED"
        assert stomp.counters.connections_refused == 1

    _run(scenario, security=security)


def test_frame_limits_and_protocol_errors_end_in_an_error_frame() -> None:
    async def scenario(stomp: StompServer, url: str, session: aiohttp.ClientSession) -> None:
        client = await _client(session, url)
        await client.connect()
        await client.send("SEND", {"destination": "/queue/big"}, b"x" * 2000)
        error = await client.read()
        assert error.command == "ERROR" and "1000" in (error.header("message") or "")
        assert await client.closed_by_server()
        early = await _client(session, url)
        await early.send("SEND", {"destination": "/queue/x"}, b"before CONNECT")
        error = await early.read()
        assert "the first frame must be CONNECT or STOMP" in (error.header("message") or "")

    _run(scenario, limits=FrameLimits(max_body_bytes=1000))


def test_heart_beats_flow_both_ways_and_silence_closes() -> None:
    async def scenario(stomp: StompServer, url: str, session: aiohttp.ClientSession) -> None:
        client = await _client(session, url)
        connected = await client.connect(heart_beat="0,100")
        assert connected.header("heart-beat") == "100,100"
        with_beats = await _client(session, url)
        await with_beats.connect(heart_beat="100,0")  # promises beats, then stays silent
        await asyncio.sleep(0.4)
        await client.send("SUBSCRIBE", {"destination": "/queue/hb", "id": "s", "receipt": "r"})
        await client.read()
        assert client.heart_beats >= 1  # the server's beats arrived before the receipt
        error = await with_beats.read()
        assert error.command == "ERROR" and "promised heart-beats" in (
            error.header("message") or ""
        )

    _run(scenario, heart_beat=HeartBeatOffer(100, 100))


def test_an_unknown_subprotocol_list_still_speaks_stomp() -> None:
    async def scenario(stomp: StompServer, url: str, session: aiohttp.ClientSession) -> None:
        websocket = await session.ws_connect(f"{url}/stomp")
        client = WebSocketStomp(websocket)
        assert websocket.protocol is None
        assert (await client.connect()).command == "CONNECTED"

    _run(scenario)


def test_pages_of_other_sites_are_refused_unless_allowed() -> None:
    async def scenario(stomp: StompServer, url: str, session: aiohttp.ClientSession) -> None:
        try:
            await session.ws_connect(f"{url}/stomp", origin="http://evil.example")
        except aiohttp.WSServerHandshakeError as error:
            assert error.status == 403
        else:
            raise AssertionError("a page of another site opened a STOMP WebSocket")
        async with session.get(
            f"{url}/stomp", headers={"Origin": "http://evil.example"}
        ) as response:
            assert "--allow-origin http://evil.example" in await response.text()
        for origin in (url, "https://app.example"):  # this server's pages, and an allowed site's
            client = WebSocketStomp(await session.ws_connect(f"{url}/stomp", origin=origin))
            assert (await client.connect()).command == "CONNECTED"

    _run(scenario, allowed_origins=("https://app.example",))


def test_jms_broker_http_port_names_its_urls_and_serves_them() -> None:
    arguments = ("--memory", "--port", "0", "--http-port", "0", "--metrics-port", "0")
    with broker_process(*arguments, "--allow-origin", "https://app.example") as (process, line):
        console = re.search(r"console: (http://127\.0\.0\.1:\d+)/", line)
        websocket = re.search(r"websocket: (ws://127\.0\.0\.1:\d+/stomp)", line)
        metrics = re.findall(r"metrics: (http://127\.0\.0\.1:\d+/metrics)", line)
        assert console and websocket and len(metrics) == 2, line
        assert websocket.group(1) == console.group(1).replace("http", "ws", 1) + "/stomp"

        async def main() -> None:
            async with aiohttp.ClientSession() as session:
                client = WebSocketStomp(
                    await session.ws_connect(
                        websocket.group(1), protocols=("v11.stomp",), origin="https://app.example"
                    )
                )
                assert client.websocket.protocol == "v11.stomp"
                await client.connect(accept_version="1.1")
                await client.send("SEND", {"destination": "/queue/q", "receipt": "r"}, b"m")
                assert (await client.read()).command == "RECEIPT"
                for url in metrics:  # --http-port and --metrics-port alike
                    async with session.get(url) as response:
                        text = await response.text()
                    assert 'jms_queue_depth{destination="queue://q",queue="queue://q"} 1.0' in text
                async with session.get(console.group(1) + "/") as response:
                    assert response.status == 200 and "jms console" in await response.text()

        asyncio.run(main())
        code, out = stop_process(process)
    assert code == 0 and "jms broker stopped" in out


def _small_receive_buffer(address: Any) -> socket.socket:
    family, kind, protocol, _, _ = address
    sock = socket.socket(family, kind, protocol)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    return sock


def test_a_websocket_client_that_stops_reading_holds_only_a_bounded_part_of_a_queue() -> None:
    async def scenario(stomp: StompServer, url: str, session: aiohttp.ClientSession) -> None:
        broker = stomp.broker
        filler = broker.connect()
        body = random.Random(7).randbytes(10_000)
        for number in range(3000):  # 30 MB
            message = BytesMessage()
            message.write_bytes(body)
            message.set_jms_destination(Queue("big"))
            message.set_jms_message_id(f"ID:filler-{number}")
            broker.send(filler, message)
        # A small receive buffer, and aiohttp stops reading what nobody receives.
        connector = aiohttp.TCPConnector(socket_factory=_small_receive_buffer)
        async with aiohttp.ClientSession(connector=connector) as sleeping:
            sleeper = await _client(sleeping, url)
            await sleeper.connect()
            await sleeper.send(
                "SUBSCRIBE", {"destination": "/queue/big", "id": "s", "activemq.prefetchSize": "50"}
            )
            await asyncio.sleep(1.0)
            taken = {s.name: s.acknowledged for s in broker.stats()}["queue://big"]
            assert 0 < taken < 1000, taken  # the write buffers on the way, not 30 MB
            other = await _client(session, url)  # others are unaffected
            await other.connect()
            await other.send("SUBSCRIBE", {"destination": "/queue/small", "id": "s"})
            await other.send("SEND", {"destination": "/queue/small"}, b"quick")
            assert (await other.read()).body == b"quick"

    _run(scenario)
