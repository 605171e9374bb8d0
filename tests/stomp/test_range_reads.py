"""The STOMP side of range reads (docs/stomp.md, "Range reads"): ``/admin/last-sequence``,
``/admin/acknowledge-through`` (with a selector too) and ``/admin/first-not-due`` answered in their
RECEIPT, browse ranges with an end, permissions (browse to read, receive to consume), and what a
client without the jms extensions gets; and encoded range reads (``read_encoded``) in process and
over STOMP's packed frames: the bytes of what ``read`` gives, paged-out messages as stored, and
malformed packed answers refused clearly."""

from __future__ import annotations

import contextlib
import socket
import struct
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jms.broker import (
    Broker,
    DestinationPolicy,
    close_embedded_broker,
    open_broker,
)
from jms.broker.security import Security, hash_password
from jms.client import ConnectionFactory, SequenceReader, Session
from jms.errors import JMSException
from jms.message import DeliveryMode, Message, Queue, TextMessage
from jms.message.codec import decode, encode
from jms.stomp import Frame, FrameParser, Role, StompProtocolError, Version
from jms.stomp.packed import PACKED_CONTENT_TYPE, pack_records, unpack_records
from jms.store import AddDestination, AppendMessage, SetDeliveryCount, StoreOperation
from jms.store.sqlite import SQLiteStore
from tests.stomp.serving import RawClient, ServedBroker
from tests.stomp.test_stomp_client import scripted_server


def _fill(session: Session, queue: str, count: int) -> None:
    producer = session.create_producer(Queue(queue))
    for number in range(count):
        producer.send(session.create_text_message(f"m{number}"))


def test_a_plain_client_reads_the_answers_in_the_receipts(
    client: RawClient, broker: Broker
) -> None:
    connection = broker.connect()
    for _ in range(3):
        message = TextMessage("x")
        message.set_jms_destination(Queue("ledger"))
        broker.send(connection, message)
    client.send(
        "SEND", {"destination": "/admin/last-sequence", "target": "/queue/ledger", "receipt": "r1"}
    )
    answer = client.read()
    assert (answer.command, answer.header("jms-last-seq")) == ("RECEIPT", "3")
    client.send(
        "SEND",
        {
            "destination": "/admin/acknowledge-through",
            "target": "/queue/ledger",
            "jms-seq": "2",
            "receipt": "r2",
        },
    )
    answer = client.read()
    assert (answer.command, answer.header("jms-acknowledged")) == ("RECEIPT", "2")
    for start, acknowledged in (("4", "0"), ("3", "1")):  # only from jms-start-seq on
        client.send(
            "SEND",
            {
                "destination": "/admin/acknowledge-through",
                "target": "/queue/ledger",
                "jms-seq": "3",
                "jms-start-seq": start,
                "receipt": f"r-from-{start}",
            },
        )
        answer = client.read()
        assert (answer.command, answer.header("jms-acknowledged")) == ("RECEIPT", acknowledged)
    client.send("SEND", {"destination": "/admin/acknowledge-through", "target": "/queue/ledger"})
    error = client.read()
    assert error.command == "ERROR"
    assert "needs a jms-seq header" in (error.header("message") or "")
    assert client.closed_by_server()


def test_a_plain_client_commits_with_a_selector_and_asks_for_the_first_message_not_due(
    client: RawClient, broker: Broker
) -> None:
    connection = broker.connect()
    for number in range(4):
        message = TextMessage(f"m{number}")
        message.set_jms_destination(Queue("ledger"))
        message.set_int_property("n", number)
        if number == 3:
            message.set_jms_delivery_time(int(time.time() * 1000) + 60_000)
        broker.send(connection, message)
    client.send(
        "SEND",
        {
            "destination": "/admin/first-not-due",
            "target": "/queue/ledger",
            "jms-browse-start": "2",
            "receipt": "r1",
        },
    )
    answer = client.read()
    assert (answer.command, answer.header("jms-first-not-due")) == ("RECEIPT", "4")
    client.send(
        "SEND",
        {
            "destination": "/admin/first-not-due",
            "target": "/queue/ledger",
            "jms-browse-end": "3",
            "receipt": "r2",
        },
    )
    assert client.read().header("jms-first-not-due") == "0"
    client.send(
        "SEND",
        {
            "destination": "/admin/acknowledge-through",
            "target": "/queue/ledger",
            "jms-seq": "3",
            "selector": "n <> 1",
            "receipt": "r3",
        },
    )
    answer = client.read()
    assert (answer.command, answer.header("jms-acknowledged")) == ("RECEIPT", "2")
    left = broker.browse(connection, Queue("ledger"))
    assert [message.get_text() for _, message in left.messages] == ["m1"]  # m3 is not due


@pytest.fixture
def secured(broker: Broker) -> Iterator[ServedBroker]:
    security = Security.from_mapping(
        {
            "users": {"reader": {"password": hash_password("pages")}},
            "permissions": [
                {"destination": "queue://ledger", "browse": ["reader"], "send": ["*"]},
            ],
            "allow_anonymous": True,
        }
    )
    with ServedBroker(broker, security=security) as served:
        yield served


def test_reading_needs_browse_and_consuming_needs_receive(secured: ServedBroker) -> None:
    factory = ConnectionFactory(secured.url)
    with factory.create_connection("reader", "pages") as connection:
        session = connection.create_session()
        _fill(session, "ledger", 4)
        reader = session.create_sequence_reader(Queue("ledger"))
        assert reader.last_sequence() == 4
        assert [seq for page in reader.read(2, 3) for seq, _ in page] == [2, 3]
        # A refused permission is an ERROR, as for any frame: the connection ends.
        with pytest.raises(JMSException, match="may not receive queue://ledger"):
            reader.acknowledge_through(4)
    with factory.create_connection("reader", "pages") as connection:
        session = connection.create_session()
        assert session.create_sequence_reader(Queue("ledger")).first_sequence() == 1
        with pytest.raises(JMSException, match="may not browse queue://other"):
            session.create_sequence_reader(Queue("other")).last_sequence()


# -- encoded range reads (SequenceReader.read_encoded) and the packed frames carrying them ------


@pytest.fixture(params=["memory", "embedded", "stomp"])
def paged_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A broker keeping two stored messages a queue in memory (the rest paged out to its store),
    reached in process (``memory://``, ``embedded://``) or over STOMP (an embedded one, served)."""
    if request.param == "memory":
        url = f"memory://paged-{uuid.uuid4().hex[:12]}"
    else:
        url = f"embedded://{tmp_path / 'store'}"
    broker = open_broker(url, default_policy=DestinationPolicy(memory_window=2))
    try:
        if request.param == "stomp":
            with ServedBroker(broker) as served:
                yield served.url
        else:
            yield url
    finally:
        close_embedded_broker(url)


def _read_both(
    reader: SequenceReader, page_size: int
) -> tuple[list[tuple[int, Message]], list[tuple[int, bytes]]]:
    read = [item for page in reader.read(1, None, page_size) for item in page]
    encoded = [
        item
        for page in reader.read_encoded(1, None, page_size)
        for item in zip(page.seqs, page.messages, strict=True)
    ]
    return read, encoded


def test_read_encoded_gives_the_encoding_of_each_message_read_gives(paged_url: str) -> None:
    with ConnectionFactory(paged_url).create_connection() as connection:
        connection.start()
        session = connection.create_session()
        queue = Queue("ledger")
        producer = session.create_producer(queue)
        bodies = [
            session.create_text_message("text"),
            session.create_bytes_message(),
            session.create_map_message(),
            session.create_stream_message(),
            session.create_object_message(),
            session.create_message(),
        ]
        for number in range(10):
            message = bodies[number % len(bodies)] if number < 6 else session.create_text_message()
            message.set_int_property("n", number)
            producer.set_delivery_delay(60_000 if number == 3 else 0)  # not due for a minute
            producer.set_time_to_live(300 if number == 4 else 0)  # paged out, then expired
            producer.set_delivery_mode(DeliveryMode.NON_PERSISTENT if number == 9 else 2)
            producer.send(message)
        # m0 comes back: delivered, rolled back, delivered again and held unacknowledged.
        transacted = connection.create_session(transacted=True)
        taker = transacted.create_consumer(queue)
        assert taker.receive(5000).get_int_property("n") == 0  # type: ignore[union-attr]
        transacted.rollback()
        transacted.close()
        holder = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        held = holder.create_consumer(queue).receive(5000)
        assert held is not None and held.get_jms_redelivered()
        time.sleep(0.4)
        reader = session.create_sequence_reader(queue)
        read, encoded = _read_both(reader, 3)
        assert [seq for seq, _ in read] == [seq for seq, _ in encoded] == [1, 2, 3, 6, 7, 8, 9, 10]
        assert [data for _, data in encoded] == [encode(message) for _, message in read]
        assert [decode(data).get_jms_redelivered() for _, data in encoded] == [True] + [False] * 7
        assert [type(decode(data)).__name__ for _, data in encoded][:3] == [
            "TextMessage",
            "BytesMessage",
            "MapMessage",
        ]
        selected = session.create_sequence_reader(queue, "n > 5 AND n <> 8")
        read, encoded = _read_both(selected, 2)
        assert [seq for seq, _ in encoded] == [7, 8, 10]
        assert [data for _, data in encoded] == [encode(message) for _, message in read]
        assert [seq for page in reader.read_encoded(6, 9, page_size=100) for seq in page.seqs] == [
            6,
            7,
            8,
            9,
        ]
        assert selected.first_sequence() == 7
        holder.close()
        # Nothing was consumed.
        assert [seq for page in reader.read_encoded(1) for seq in page.seqs][:3] == [1, 2, 3]


@pytest.mark.parametrize("over_stomp", [False, True])
def test_paged_out_messages_go_out_as_stored_with_their_redelivered_flag(
    tmp_path: Path, over_stomp: bool
) -> None:
    # A store as a broker leaves it: seq 3 was delivered twice without an acknowledgement, and
    # seq 4 was sent with JMSRedelivered set (the entry's count, 0, is what a browse shows).
    store = SQLiteStore(tmp_path)
    messages = [TextMessage(f"m{seq}") for seq in range(1, 7)]
    messages[3].set_jms_redelivered(True)
    operations: list[StoreOperation] = [AddDestination("queue://ledger")]
    for seq, message in enumerate(messages, 1):
        message.set_jms_destination(Queue("ledger"))
        message.set_jms_message_id(f"ID:m{seq}")
        operations.append(AppendMessage("queue://ledger", seq, message, ("queue://ledger",)))
    operations.append(SetDeliveryCount("queue://ledger", 3, 2))
    store.submit(operations).wait()
    store.close()
    url = f"embedded://{tmp_path}"
    broker = open_broker(url, default_policy=DestinationPolicy(memory_window=2))
    try:
        with contextlib.ExitStack() as stack:
            reach = url
            if over_stomp:
                reach = stack.enter_context(ServedBroker(broker)).url
            connection = stack.enter_context(ConnectionFactory(reach).create_connection())
            reader = connection.create_session().create_sequence_reader(Queue("ledger"))
            read, encoded = _read_both(reader, 4)
    finally:
        close_embedded_broker(url)
    assert [seq for seq, _ in encoded] == [1, 2, 3, 4, 5, 6]
    assert [data for _, data in encoded] == [encode(message) for _, message in read]
    flags = [decode(data).get_jms_redelivered() for _, data in encoded]
    assert flags == [False, False, True, False, False, False]
    expected = [copy_with_redelivered(message, seq == 3) for seq, message in enumerate(messages, 1)]
    assert [data for _, data in encoded] == [encode(message) for message in expected]


def copy_with_redelivered(message: Message, redelivered: bool) -> Message:
    copy = decode(encode(message))
    copy.set_jms_redelivered(redelivered)
    return copy


def test_a_packed_body_is_read_back_record_by_record() -> None:
    messages = [encode(TextMessage("a")), b"", encode(TextMessage("b" * 300))]
    body = pack_records([2, 7, 2**63], messages)
    assert unpack_records(body, 3) == ([2, 7, 2**63], messages)
    assert unpack_records(b"", 0) == ([], [])
    with pytest.raises(ValueError, match="2 sequence numbers for 3 messages"):
        pack_records([1, 2], messages)


@pytest.mark.parametrize(
    ("body", "count", "error"),
    [
        (b"", 1, r"record 1 of 1 needs a 12-byte head at byte 0, but only 0 bytes remain"),
        (struct.pack(">QI", 5, 3) + b"ab", 1, r"record 1 of 1 \(seq 5\) declares 3 bytes"),
        (struct.pack(">QI", 5, 2**32 - 1), 1, r"declares 4294967295 bytes at byte 12"),
        (struct.pack(">QI", 5, 1) + b"a" + b"\x00" * 11, 2, r"record 2 of 2 needs a 12-byte head"),
        (struct.pack(">QI", 5, 0) + b"extra", 1, r"5 bytes after its 1 records \(at byte 12\)"),
        (struct.pack(">QIQI", 5, 0, 5, 0), 2, r"out of order: record 2 has seq 5 after 5"),
        (struct.pack(">QI", 0, 0), 1, r"out of order: record 1 has seq 0 after 0"),
        (struct.pack(">QI", 5, 0), 0, r"12 bytes after its 0 records"),
    ],
)
def test_a_malformed_packed_body_is_refused_saying_what_is_wrong(
    body: bytes, count: int, error: str
) -> None:
    with pytest.raises(StompProtocolError, match=error):
        unpack_records(body, count)


def _packed_frame(subscription: str, body: bytes, **headers: str) -> bytes:
    head = {
        "subscription": subscription,
        "message-id": "packed-1",
        "destination": "/queue/ledger",
        "content-type": PACKED_CONTENT_TYPE,
        **headers,
    }
    return Frame("MESSAGE", tuple(head.items()), body).to_bytes(Version.V1_2)


def _answering_range_reads(
    answer: Callable[[str], list[bytes]], next_seq: str | None
) -> Callable[[socket.socket], None]:
    """A scripted jms broker: it answers each browse SUBSCRIBE with its RECEIPT, the frames
    ``answer(subscription id)`` gives, and ``browser:end`` (with ``jms-next-seq:next_seq``)."""

    def script(connection: socket.socket) -> None:
        parser = FrameParser(Role.CLIENT, version=Version.V1_2)
        connection.settimeout(5)
        while True:
            try:
                data = connection.recv(65536)
            except OSError:
                return
            if not data:
                return
            for event in parser.feed(data):
                if not isinstance(event, Frame):
                    continue
                out: list[bytes] = []
                if event.command in ("CONNECT", "STOMP"):
                    connected = Frame("CONNECTED", (("version", "1.2"), ("jms-extensions", "1")))
                    out.append(connected.to_bytes(Version.V1_2))
                receipt = event.header("receipt")
                if receipt is not None:
                    out.append(Frame("RECEIPT", (("receipt-id", receipt),)).to_bytes(Version.V1_2))
                if event.command == "SUBSCRIBE":
                    stomp_id = event.header("id") or ""
                    assert event.header("jms-browse-format") == "packed"
                    out += answer(stomp_id)
                    end = (
                        ("subscription", stomp_id),
                        ("message-id", "0"),
                        ("destination", "/queue/ledger"),
                        ("browser", "end"),
                        *((("jms-next-seq", next_seq),) if next_seq is not None else ()),
                    )
                    out.append(Frame("MESSAGE", end).to_bytes(Version.V1_2))
                connection.sendall(b"".join(out))

    return script


_TEXT = encode(TextMessage("x"))


@pytest.mark.parametrize(
    ("frames", "error"),
    [
        (
            lambda s: [_packed_frame(s, pack_records([1], [_TEXT])[:-1], **{"jms-count": "1"})],
            "record 1 of 1 \\(seq 1\\) declares",
        ),
        (
            lambda s: [_packed_frame(s, pack_records([1], [_TEXT]), **{"jms-count": "2"})],
            "record 2 of 2 needs a 12-byte head",
        ),
        (
            lambda s: [_packed_frame(s, pack_records([1], [_TEXT]), **{"jms-count": "x"})],
            "packed frame with jms-count:'x'",
        ),
        (
            lambda s: [
                _packed_frame(s, pack_records([1], [_TEXT]), **{"content-type": "text/plain"})
            ],
            "expected a packed frame .* got content-type:'text/plain'",
        ),
        (
            lambda s: [
                _packed_frame(s, pack_records([4], [_TEXT]), **{"jms-count": "1"}),
                _packed_frame(s, pack_records([3], [_TEXT]), **{"jms-count": "1"}),
            ],
            "packed frame holds seq 3 to 3, outside the range still to read \\(5 to 9\\)",
        ),
        (
            lambda s: [_packed_frame(s, pack_records([10], [_TEXT]), **{"jms-count": "1"})],
            "outside the range still to read \\(2 to 9\\)",
        ),
        (
            lambda s: [
                _packed_frame(s, pack_records(range(2, 6), [_TEXT] * 4), **{"jms-count": "4"})
            ],
            "4 messages for a page of 3",
        ),
        (
            lambda s: [_packed_frame(s, pack_records([2, 4], [_TEXT] * 2), **{"jms-count": "2"})],
            "jms-next-seq:4 does not follow seq 4",
        ),
        (
            lambda s: [_packed_frame(s, pack_records([2], [b"JM\x01"]), **{"jms-count": "1"})],
            "seq 2: cannot read the fixed header of 3 bytes starting .*: not a jms message",
        ),
    ],
)
def test_a_malformed_packed_answer_is_a_clear_jms_exception(
    frames: Callable[[str], list[bytes]], error: str
) -> None:
    with (
        scripted_server(_answering_range_reads(frames, "4")) as port,
        ConnectionFactory(f"stomp://127.0.0.1:{port}").create_connection() as connection,
    ):
        reader = connection.create_session().create_sequence_reader(Queue("ledger"))
        with pytest.raises(JMSException, match=error):
            list(reader.read_encoded(2, 9, page_size=3))
        with pytest.raises(JMSException, match=error):
            list(reader.read(2, 9, page_size=3))


@pytest.mark.parametrize("next_seq", ["x", "", "-4", "٤"])
def test_a_next_page_that_is_not_a_number_is_refused_not_taken_for_the_end(next_seq: str) -> None:
    with (
        scripted_server(_answering_range_reads(lambda s: [], next_seq)) as port,
        ConnectionFactory(f"stomp://127.0.0.1:{port}").create_connection() as connection,
    ):
        reader = connection.create_session().create_sequence_reader(Queue("ledger"))
        with pytest.raises(JMSException, match=f"jms-next-seq:{next_seq!r} is not a sequence"):
            list(reader.read_encoded(2, 9, page_size=3))


def test_a_plain_client_asking_for_packed_frames_gets_one_frame_per_message(
    client: RawClient, broker: Broker
) -> None:
    connection = broker.connect()
    for text in ("a", "b"):
        message = TextMessage(text)
        message.set_jms_destination(Queue("ledger"))
        broker.send(connection, message)
    client.send(
        "SUBSCRIBE",
        {
            "destination": "/queue/ledger",
            "id": "b",
            "browser": "true",
            "jms-browse-format": "packed",
        },
    )
    assert [client.read().body for _ in range(2)] == [b"a", b"b"]
    assert client.read().header("browser") == "end"


def test_an_unknown_browse_format_is_refused(served: ServedBroker) -> None:
    with RawClient(served.port) as raw:
        raw.connect(**{"jms-extensions": "1"})
        raw.send(
            "SUBSCRIBE",
            {
                "destination": "/queue/ledger",
                "id": "b",
                "browser": "true",
                "jms-browse-format": "csv",
            },
        )
        error = raw.read()
        assert error.command == "ERROR"
        assert "jms-browse-format:'csv' must be 'messages' or 'packed'" in (
            error.header("message") or ""
        )


def test_a_packed_answer_splits_into_frames_of_at_most_a_mebibyte(
    served: ServedBroker, broker: Broker
) -> None:
    connection = broker.connect()
    for number in range(5):
        message = TextMessage(str(number) * 300_000)
        message.set_jms_destination(Queue("ledger"))
        broker.send(connection, message)
    with RawClient(served.port) as raw:
        raw.connect(**{"jms-extensions": "1"})
        raw.send(
            "SUBSCRIBE",
            {
                "destination": "/queue/ledger",
                "id": "b",
                "browser": "true",
                "jms-browse-format": "packed",
                "jms-browse-limit": "10",
            },
        )
        frames = [raw.read(), raw.read()]
        assert raw.read().header("browser") == "end"
    assert [frame.header("jms-count") for frame in frames] == ["3", "2"]
    assert all(len(frame.body) <= 1024 * 1024 for frame in frames)
    seqs = [
        seq
        for frame in frames
        for seq in unpack_records(frame.body, int(frame.header("jms-count") or 0))[0]
    ]
    assert seqs == [1, 2, 3, 4, 5]
    texts = [
        decode(data).get_text()[0]  # type: ignore[attr-defined]
        for frame in frames
        for data in unpack_records(frame.body, int(frame.header("jms-count") or 0))[1]
    ]
    assert texts == ["0", "1", "2", "3", "4"]
