"""The web console's JSON API against a real broker over HTTP: listing (internal destinations
hidden, dead-letter queues marked), browsing with a selector, sending, purging, deleting, moving
dead letters back; who may use it, forgery protection, and clear errors for bad input."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from jms.broker.security import Security, hash_password
from jms.message import ObjectMessage, StreamMessage
from jms.stomp import FrameLimits
from jms.stomp.server import StompServer
from jms.web.console import message_json
from tests.web.serving import WebSocketStomp, basic_auth, served_http

Scenario = Callable[[StompServer, "Console"], Awaitable[None]]


class Console:
    """The console's API as the page calls it (the CSRF token from /api/session)."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url

    async def get(self, path: str, **params: str) -> tuple[int, Any]:
        async with self.session.get(self.url + path, params=params) as response:
            return response.status, await response.json()

    async def post(
        self, path: str, payload: object, *, token: str | None = None
    ) -> tuple[int, Any]:
        if token is None:
            _, session = await self.get("/api/session")
            token = session["csrf_token"]
        headers = {"X-CSRF-Token": token}
        async with self.session.post(self.url + path, json=payload, headers=headers) as response:
            return response.status, await response.json()

    async def send(self, destination: str, body: str, *properties: str, kind: str = "text") -> None:
        status, answer = await self.post(
            "/api/send",
            {
                "destination": destination,
                "type": kind,
                "body": body,
                "properties": list(properties),
            },
        )
        assert status == 200, answer

    async def names(self) -> list[str]:
        status, answer = await self.get("/api/destinations")
        assert status == 200, answer
        return [d["name"] for d in answer["destinations"]]


def _run(scenario: Scenario, auth: dict[str, str] | None = None, **server_options: object) -> None:
    async def main() -> None:
        async with (
            served_http(**server_options) as (stomp, http),
            aiohttp.ClientSession(headers=auth) as session,
        ):
            await scenario(stomp, Console(session, http.url))

    asyncio.run(main())


def test_destinations_are_listed_live_with_dead_letter_queues_marked_and_internals_hidden() -> None:
    async def scenario(stomp: StompServer, console: Console) -> None:
        assert await console.names() == []
        await console.send("queue://orders", "one")
        await console.send("queue://orders", "two")
        await console.send("queue://DLQ.orders", "dead")
        await console.send("queue://jms.spark.staging.x", "internal")
        _, answer = await console.get("/api/destinations")
        rows = {d["name"]: d for d in answer["destinations"]}
        assert sorted(rows) == ["queue://DLQ.orders", "queue://orders"]
        assert rows["queue://orders"]["depth"] == 2 and rows["queue://orders"]["enqueued"] == 2
        assert rows["queue://orders"]["dead_letter_queue"] is False
        assert rows["queue://DLQ.orders"]["dead_letter_queue"] is True
        assert rows["queue://orders"]["browsable"] is True

    _run(scenario)


def test_topics_are_listed_with_their_subscriptions_and_durable_ones_browse() -> None:
    async def scenario(stomp: StompServer, console: Console) -> None:
        websocket = await console.session.ws_connect(console.url + "/stomp")
        subscriber = WebSocketStomp(websocket)
        await subscriber.connect(client_id="c1")
        await subscriber.send(
            "SUBSCRIBE",
            {
                "destination": "/topic/news",
                "id": "s",
                "activemq.subscriptionName": "d1",
                "receipt": "r",
            },
        )
        assert (await subscriber.read()).command == "RECEIPT"
        await websocket.close()
        await console.send("topic://news", "hello")
        await console.send("topic://quiet", "nobody hears this")
        await console.send("queue://orders", "o")
        _, answer = await console.get("/api/destinations")
        rows = answer["destinations"]
        assert [(d["name"], d["kind"]) for d in rows] == [
            ("queue://orders", "queue"),
            ("topic://news", "topic"),
            ("durable://c1/d1", "durable"),
            ("topic://quiet", "topic"),
        ]
        assert (rows[1]["depth"], rows[1]["subscriptions"]) == (1, 1)
        assert (rows[3]["depth"], rows[3]["subscriptions"]) == (0, 0)
        status, page = await console.get("/api/messages", destination="durable://c1/d1")
        assert status == 200 and [m["body"]["text"] for m in page["messages"]] == ["hello"]

    _run(scenario)


def test_messages_are_browsed_in_pages_with_a_selector_in_their_java_forms() -> None:
    async def scenario(stomp: StompServer, console: Console) -> None:
        for weight in range(5):
            await console.send(
                "queue://orders", f"order {weight}", f"weight=int:{weight}", "color=red"
            )
        await console.send("queue://orders", "a1 ff 00", "weight=long:99", kind="bytes")
        await console.send("queue://orders", "size=short:3\nlabel=big\nok=boolean:true", kind="map")
        status, page = await console.get(
            "/api/messages", destination="queue://orders", selector="weight > 1", limit="2"
        )
        assert status == 200, page
        assert [m["body"]["text"] for m in page["messages"]] == ["order 2", "order 3"]
        assert page["next_start"] is not None
        first = page["messages"][0]
        assert {"name": "weight", "type": "int", "value": "2"} in first["properties"]
        assert first["headers"]["JMSDestination"] == "queue://orders"
        assert first["headers"]["JMSDeliveryMode"] == "PERSISTENT"
        assert first["headers"]["JMSMessageID"].startswith("ID:console-")
        status, rest = await console.get(
            "/api/messages",
            destination="queue://orders",
            selector="weight > 1",
            start=str(page["next_start"]),
        )
        assert [m["body"]["type"] for m in rest["messages"]] == ["text", "bytes"]
        assert rest["messages"][1]["body"] == {"type": "bytes", "length": 3, "hex": "a1 ff 00"}
        assert rest["next_start"] is None
        _, maps = await console.get(
            "/api/messages", destination="queue://orders", selector="weight IS NULL"
        )
        assert maps["messages"][0]["body"]["entries"] == [
            {"name": "size", "type": "short", "value": "3"},
            {"name": "label", "type": "String", "value": "big"},
            {"name": "ok", "type": "boolean", "value": "true"},
        ]

    _run(scenario)


def test_bad_input_gets_a_clear_message_for_its_field() -> None:
    async def scenario(stomp: StompServer, console: Console) -> None:
        await console.send("queue://orders", "x")
        status, answer = await console.get(
            "/api/messages", destination="queue://orders", selector="weight >"
        )
        assert status == 400 and answer["field"] == "selector" and "weight >" in answer["error"]
        status, answer = await console.get("/api/messages", destination="queue://nothing")
        assert status == 404 and "queue://nothing" in answer["error"]
        status, answer = await console.get("/api/messages", destination="topic://news")
        assert status == 400 and "cannot be browsed" in answer["error"]
        status, answer = await console.get(
            "/api/messages", destination="queue://orders", limit="lots"
        )
        assert status == 400 and answer["field"] == "limit"
        send = {"destination": "queue://orders", "type": "text", "body": "x" * 101}
        status, answer = await console.post("/api/send", send)
        assert status == 413 and answer["field"] == "body" and "at most 100" in answer["error"]
        status, answer = await console.post(
            "/api/send", {**send, "body": "x", "properties": ["weight=int:many"]}
        )
        assert (
            status == 400
            and answer["field"] == "properties"
            and "'weight=int:many'" in answer["error"]
        )
        status, answer = await console.post("/api/send", {**send, "type": "bytes", "body": "zz"})
        assert status == 400 and "hex" in answer["error"]
        status, answer = await console.post(
            "/api/send", {**send, "destination": "orders", "body": "x"}
        )
        assert status == 400 and answer["field"] == "destination"
        status, answer = await console.post("/api/send", {**send, "type": "stream", "body": "x"})
        assert status == 400 and answer["field"] == "type"
        _, session = await console.get("/api/session")
        async with console.session.post(
            console.url + "/api/purge",
            data="{not json",
            headers={"X-CSRF-Token": session["csrf_token"], "Content-Type": "application/json"},
        ) as response:
            assert response.status == 400 and "not JSON" in (await response.json())["error"]

    _run(scenario, limits=FrameLimits(max_body_bytes=100))


def test_purge_and_delete_one() -> None:
    async def scenario(stomp: StompServer, console: Console) -> None:
        for n in range(3):
            await console.send("queue://orders", f"m{n}")
        _, page = await console.get("/api/messages", destination="queue://orders")
        seq = page["messages"][1]["seq"]
        status, answer = await console.post(
            "/api/delete", {"destination": "queue://orders", "seq": seq}
        )
        assert status == 200 and answer["deleted"] == seq
        _, page = await console.get("/api/messages", destination="queue://orders")
        assert [m["body"]["text"] for m in page["messages"]] == ["m0", "m2"]
        status, answer = await console.post(
            "/api/delete", {"destination": "queue://orders", "seq": seq}
        )
        assert status == 409 and "gone" in answer["error"]
        status, answer = await console.post("/api/purge", {"destination": "queue://orders"})
        assert status == 200 and answer["purged"] == 2
        _, page = await console.get("/api/messages", destination="queue://orders")
        assert page["messages"] == []

    _run(scenario)


def test_dead_letters_move_back_one_selected_or_all() -> None:
    async def scenario(stomp: StompServer, console: Console) -> None:
        for n in range(4):
            await console.send(
                "queue://DLQ.orders",
                f"dead {n}",
                "JMS_jms_OriginalDestination=queue://orders",
                "JMS_jms_DeadLetterReason=delivered 3 times",
                f"n=int:{n}",
            )
        await console.send("queue://DLQ.orders", "orphan")
        _, page = await console.get("/api/messages", destination="queue://DLQ.orders")
        seqs = [m["seq"] for m in page["messages"]]
        status, answer = await console.post(
            "/api/move", {"destination": "queue://DLQ.orders", "seqs": seqs[:1]}
        )
        assert status == 200 and answer == {"moved": 1, "skipped": []}
        status, answer = await console.post(
            "/api/move", {"destination": "queue://DLQ.orders", "seqs": seqs[1:3]}
        )
        assert answer == {"moved": 2, "skipped": []}
        status, answer = await console.post(
            "/api/move", {"destination": "queue://DLQ.orders", "all": True}
        )
        assert answer["moved"] == 1
        assert answer["skipped"] == [
            {"seq": seqs[4], "reason": "it has no JMS_jms_OriginalDestination property"}
        ]
        _, orders = await console.get("/api/messages", destination="queue://orders")
        assert [m["body"]["text"] for m in orders["messages"]] == [f"dead {n}" for n in range(4)]
        names = {p["name"] for p in orders["messages"][0]["properties"]}
        assert names == {"n"}  # where it came from and why are gone with the move
        assert orders["messages"][0]["headers"]["JMSDestination"] == "queue://orders"
        status, answer = await console.post(
            "/api/move", {"destination": "queue://orders", "all": True}
        )
        assert status == 400 and "not a dead-letter queue" in answer["error"]
        status, answer = await console.post(
            "/api/move", {"destination": "queue://DLQ.orders", "seqs": []}
        )
        assert status == 400 and answer["field"] == "seqs"

    _run(scenario)


_CONFIG = {
    "users": {
        "alice": {"password": hash_password("a")},
        "bob": {"password": hash_password("b")},
        "carol": {"password": hash_password("c")},
    },
    "permissions": [
        {"destination": "queue://orders*", "admin": ["alice", "carol"], "send": ["*"]},
        {"destination": "*", "admin": ["alice"], "send": ["*"], "receive": ["*"]},
    ],
}


def test_only_administrators_get_in_and_each_action_is_checked() -> None:
    security = Security.from_mapping(_CONFIG)

    async def scenario(stomp: StompServer, console: Console) -> None:
        async with aiohttp.ClientSession() as anonymous:
            async with anonymous.get(console.url + "/") as response:
                assert response.status == 401
                assert response.headers["WWW-Authenticate"].startswith("Basic")
            async with anonymous.get(console.url + "/api/destinations") as response:
                assert response.status == 401
                assert "anonymous" in (await response.json())["error"]
            for header, error in (("Basic !!!", "not base64"), ("Bearer x", "not 'Bearer'")):
                async with anonymous.get(
                    console.url + "/api/session", headers={"Authorization": header}
                ) as response:
                    assert response.status == 401 and error in (await response.json())["error"]
        for user, password, status in (
            ("bob", "b", 403),
            ("alice", "wrong", 401),
            ("alice", "a", 200),
        ):
            async with (
                aiohttp.ClientSession(headers=basic_auth(user, password)) as session,
                session.get(console.url + "/api/destinations") as response,
            ):
                assert response.status == status, (user, await response.text())
        assert (await Console(console.session, console.url).get("/api/session"))[1][
            "user"
        ] == "carol"
        await console.send("queue://orders", "x")
        status, answer = await console.post(
            "/api/send", {"destination": "queue://payments", "body": "x"}
        )
        assert status == 403 and "'carol' may not administer queue://payments" in answer["error"]
        async with aiohttp.ClientSession(headers=basic_auth("alice", "a")) as session:
            alice = Console(session, console.url)
            await alice.send("queue://payments", "p")
            assert await alice.names() == ["queue://orders", "queue://payments"]
        assert await console.names() == ["queue://orders"]  # carol sees what she administers
        status, answer = await console.post("/api/purge", {"destination": "queue://payments"})
        assert status == 403

    _run(scenario, auth=basic_auth("carol", "c"), security=security)


def test_changes_need_the_csrf_token_json_and_this_origin() -> None:
    async def scenario(stomp: StompServer, console: Console) -> None:
        payload = {"destination": "queue://orders", "body": "x"}
        status, answer = await console.post("/api/send", payload, token="forged")
        assert status == 403 and "X-CSRF-Token" in answer["error"]
        _, session = await console.get("/api/session")
        token = session["csrf_token"]
        async with console.session.post(
            console.url + "/api/send",
            json=payload,
            headers={"X-CSRF-Token": token, "Origin": "http://evil.example"},
        ) as response:
            assert response.status == 403
            assert (
                "cross-origin request from http://evil.example" in (await response.json())["error"]
            )
        async with console.session.post(
            console.url + "/api/send",
            data="destination=queue://orders",
            headers={"X-CSRF-Token": token},
        ) as response:
            assert response.status == 415
        assert await console.names() == []
        status, _ = await console.post("/api/send", payload, token=token)
        assert status == 200

    _run(scenario)


class _Order:
    """Counts its unpickling, which the console must never do."""

    unpickled = 0

    def __init__(self) -> None:
        self.quantity = 3

    def __setstate__(self, state: dict[str, Any]) -> None:
        _Order.unpickled += 1
        self.__dict__.update(state)


def test_an_object_message_is_shown_without_unpickling() -> None:
    shown = message_json(7, ObjectMessage(_Order()))
    assert shown["seq"] == 7
    assert shown["body"]["type"] == "object"
    assert shown["body"]["class"] == f"{_Order.__module__}._Order"
    assert shown["body"]["size"] > 0
    assert _Order.unpickled == 0
    assert message_json(1, ObjectMessage({"a": 1}))["body"]["class"] == "builtins.dict"
    stream = StreamMessage()
    stream.write_int(5)
    stream.write_float(1.5)
    stream.write_bytes(b"\x00\xff")
    stream.write_string("s")
    assert message_json(1, stream)["body"]["values"] == [
        {"type": "int", "value": "5"},
        {"type": "float", "value": "1.5"},
        {"type": "byte[]", "value": "00 ff"},
        {"type": "String", "value": "s"},
    ]
