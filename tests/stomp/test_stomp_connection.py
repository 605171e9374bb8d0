"""The server-side connection state machine: which frames are valid when, and what it answers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jms.stomp import (
    ConnectRequest,
    Frame,
    HeartBeat,
    HeartBeatIntervals,
    HeartBeatOffer,
    Role,
    ServerConnection,
    ServerState,
    StompProtocolError,
    StompUsageError,
    Version,
    error_frame,
    receipt_frame,
    required_headers,
)
from tests.stomp.stomp_testing import parse

CONNECT_1_2 = b"CONNECT\naccept-version:1.0,1.1,1.2\nhost:localhost\n\n\x00"


def connected(version: Version = Version.V1_2) -> ServerConnection:
    """A connection whose client connected in ``version`` and was accepted."""
    connection = ServerConnection()
    accept_version = f"accept-version:{version}\nhost:h\n" if version is not Version.V1_0 else ""
    [request] = connection.feed(f"CONNECT\n{accept_version}\n\x00".encode())
    assert isinstance(request, ConnectRequest)
    connection.accept()
    return connection


def protocol_error(connection: ServerConnection, data: bytes) -> StompProtocolError:
    with pytest.raises(StompProtocolError) as caught:
        list(connection.feed(data))
    return caught.value


def answer(connection: ServerConnection, data: bytes) -> Frame:
    """The ERROR frame the connection answers ``data`` with, as the client reads it."""
    error = protocol_error(connection, data)
    [frame] = parse(connection.send_error(error), Role.SERVER, connection.version or Version.V1_0)
    assert connection.state is ServerState.CLOSED
    return frame


def test_connect_becomes_a_request_and_accept_writes_connected() -> None:
    connection = ServerConnection(heart_beat=HeartBeatOffer(1000, 2000))
    [request] = connection.feed(CONNECT_1_2.replace(b"\n\n", b"\nheart-beat:500,5000\nlogin:u\n\n"))
    assert isinstance(request, ConnectRequest)
    assert request.version is Version.V1_2
    assert request.frame.header("login") == "u"
    assert request.heart_beat == HeartBeatIntervals(send_every_ms=5000, expect_every_ms=2000)
    assert connection.state is ServerState.CONNECTING
    assert connection.version is None
    data = connection.accept(session="s-1", server="jms/0.1.0")
    assert (
        data
        == b"CONNECTED\nversion:1.2\nheart-beat:1000,2000\nsession:s-1\nserver:jms/0.1.0\n\n\x00\n"
    )
    assert connection.state is ServerState.CONNECTED
    assert connection.version is Version.V1_2
    assert connection.heart_beat == HeartBeatIntervals(5000, 2000)


def test_the_stomp_frame_connects_like_connect() -> None:
    connection = ServerConnection()
    [request] = connection.feed(CONNECT_1_2.replace(b"CONNECT", b"STOMP"))
    assert isinstance(request, ConnectRequest)
    assert request.frame.command == "STOMP"


def test_a_1_0_client_gets_no_heart_beats() -> None:
    connection = ServerConnection(heart_beat=HeartBeatOffer(1000, 1000))
    [request] = connection.feed(b"CONNECT\nheart-beat:1000,1000\n\n\x00")
    assert isinstance(request, ConnectRequest)
    assert request.version is Version.V1_0
    assert request.heart_beat == HeartBeatIntervals(0, 0)
    assert connection.accept() == b"CONNECTED\nversion:1.0\n\n\x00\n"


def test_heart_beats_before_connect_are_events() -> None:
    connection = ServerConnection()
    events = list(connection.feed(b"\r\n\n" + CONNECT_1_2))
    assert events[:2] == [HeartBeat(), HeartBeat()]
    assert isinstance(events[2], ConnectRequest)


def test_a_connect_alone_in_its_chunk_can_be_collected_before_answering() -> None:
    connection = ServerConnection()
    assert [type(event) for event in connection.feed(CONNECT_1_2)] == [ConnectRequest]
    assert connection.state is ServerState.CONNECTING


def test_reading_on_before_answering_the_connect_request_is_a_usage_error() -> None:
    connection = ServerConnection()
    events = connection.feed(CONNECT_1_2 + b"SEND\ndestination:/q\n\n\x00")
    assert isinstance(next(events), ConnectRequest)
    with pytest.raises(StompUsageError, match="answer it with accept"):
        next(events)
    more = connection.feed(b"SEND\ndestination:/q\n\n\x00")  # buffering more is fine
    with pytest.raises(StompUsageError, match="answer it with accept"):
        next(more)
    connection.accept()
    resumed = connection.feed(b"")
    assert [event.command for event in resumed if isinstance(event, Frame)] == ["SEND", "SEND"]


def test_frames_pipelined_after_connect_are_read_in_the_negotiated_version() -> None:
    connection = ServerConnection()
    events = connection.feed(CONNECT_1_2 + b"SEND\ndestination:/q\nkey:a\\cb\\r\n\n\x00")
    assert isinstance(next(events), ConnectRequest)
    connection.accept()
    assert list(events) == [Frame("SEND", (("destination", "/q"), ("key", "a:b\r")))]


def test_connect_headers_are_read_verbatim() -> None:
    connection = ServerConnection()
    [request] = connection.feed(CONNECT_1_2.replace(b"\n\n", b"\npasscode:a\\tb\n\n"))
    assert isinstance(request, ConnectRequest)
    assert request.frame.header("passcode") == "a\\tb"


def test_the_first_frame_must_be_connect() -> None:
    frame = answer(ServerConnection(), b"SEND\ndestination:/q\nreceipt:r-7\n\n\x00")
    assert frame.header("message") == "SEND frame #1: the first frame must be CONNECT or STOMP"
    assert frame.header("receipt-id") == "r-7"


def test_no_common_version_is_answered_with_ours() -> None:
    frame = answer(ServerConnection(), b"CONNECT\naccept-version:2.0\nhost:h\n\n\x00")
    assert frame.header("version") == "1.0,1.1,1.2"
    assert frame.header("content-type") == "text/plain"
    assert b"supported protocol versions are 1.0 1.1 1.2" in frame.body
    assert str(frame.header("message")).startswith("CONNECT frame #1: no STOMP version in common")


@pytest.mark.parametrize("accept_version", [b"1.1", b"1.2"])
def test_host_may_be_left_out(accept_version: bytes) -> None:
    [request] = ServerConnection().feed(b"STOMP\naccept-version:" + accept_version + b"\n\n\x00")
    assert isinstance(request, ConnectRequest)
    assert request.version.value == accept_version.decode()


def test_a_malformed_heart_beat_is_refused() -> None:
    frame = answer(ServerConnection(), CONNECT_1_2.replace(b"\n\n", b"\nheart-beat:fast\n\n"))
    assert "heart-beat 'fast' is not two millisecond counts" in frame.header("message")


def test_a_receipt_on_connect_is_not_echoed() -> None:
    frame = answer(ServerConnection(), b"CONNECT\naccept-version:9\nreceipt:r\n\n\x00")
    assert frame.header("receipt-id") is None


def test_connecting_twice_is_refused() -> None:
    connection = connected()
    frame = answer(connection, CONNECT_1_2.replace(b"\n\n", b"\nreceipt:again\n\n"))
    assert frame.header("message") == "CONNECT frame #2: the connection is already connected"
    assert frame.header("receipt-id") == "again"


def test_connected_frames_come_out_as_they_are() -> None:
    connection = connected()
    data = (
        b"SUBSCRIBE\nid:0\ndestination:/queue/a\nack:client-individual\n\n\x00"
        b"SEND\ndestination:/queue/a\ncontent-length:2\n\nhi\x00\n\n"
        b"ACK\nid:m-1\n\n\x00"
    )
    events = list(connection.feed(data))
    assert [event.command if isinstance(event, Frame) else event for event in events] == [
        "SUBSCRIBE",
        "SEND",
        HeartBeat(),
        "ACK",
    ]
    assert connection.state is ServerState.CONNECTED


def frame_bytes(command: str, headers: tuple[tuple[str, str], ...]) -> bytes:
    return Frame(command, (*headers, ("receipt", "r-1"))).to_bytes(Version.V1_2)


FULL_HEADERS = {
    "SEND": (("destination", "/q"),),
    "SUBSCRIBE": (("destination", "/q"), ("id", "0")),
    "UNSUBSCRIBE": (("id", "0"),),
    "ACK": (("id", "1"), ("message-id", "1"), ("subscription", "0")),
    "NACK": (("id", "1"), ("message-id", "1"), ("subscription", "0")),
    "BEGIN": (("transaction", "t"),),
    "COMMIT": (("transaction", "t"),),
    "ABORT": (("transaction", "t"),),
    "DISCONNECT": (),
}


@pytest.mark.parametrize(
    ("version", "command"),
    [
        (version, command)
        for version in (Version.V1_0, Version.V1_1, Version.V1_2)
        for command in sorted(FULL_HEADERS)
        if not (command == "NACK" and version is Version.V1_0)
    ],
)
def test_each_required_header_is_required(version: Version, command: str) -> None:
    headers = FULL_HEADERS[command]
    [frame] = connected(version).feed(frame_bytes(command, headers))
    assert isinstance(frame, Frame) and frame.command == command
    for group in required_headers(command, version):
        without = tuple(header for header in headers if header[0] not in group)
        frame = answer(connected(version), frame_bytes(command, without))
        names = " or ".join(repr(name) for name in group)
        assert (
            frame.header("message")
            == f"{command} frame #2: missing header {names}, required in STOMP {version}"
        )
        assert frame.header("receipt-id") == "r-1"


@pytest.mark.parametrize(
    ("version", "command", "names"),
    [
        (Version.V1_0, "SUBSCRIBE", ["destination"]),
        (Version.V1_1, "SUBSCRIBE", ["destination", "id"]),
        (Version.V1_0, "UNSUBSCRIBE", ["id or destination"]),
        (Version.V1_2, "UNSUBSCRIBE", ["id"]),
        (Version.V1_0, "ACK", ["message-id"]),
        (Version.V1_1, "ACK", ["message-id", "subscription"]),
        (Version.V1_2, "ACK", ["id"]),
        (Version.V1_2, "NACK", ["id"]),
        (Version.V1_2, "RECEIPT", ["receipt-id"]),
        (Version.V1_2, "MESSAGE", ["destination", "message-id", "subscription"]),
        (Version.V1_0, "MESSAGE", ["destination", "message-id"]),
        (Version.V1_2, "DISCONNECT", []),
    ],
)
def test_required_headers_differ_by_version(
    version: Version, command: str, names: list[str]
) -> None:
    assert [" or ".join(group) for group in required_headers(command, version)] == names


def test_a_required_header_with_an_empty_value_is_present() -> None:
    [frame] = connected().feed(b"SEND\ndestination:\n\n\x00")
    assert frame == Frame("SEND", (("destination", ""),))


def test_1_0_unsubscribe_takes_a_destination_instead_of_an_id() -> None:
    connection = connected(Version.V1_0)
    [frame] = connection.feed(b"UNSUBSCRIBE\ndestination:/q\n\n\x00")
    assert frame == Frame("UNSUBSCRIBE", (("destination", "/q"),))


def test_nack_is_not_part_of_1_0() -> None:
    frame = answer(connected(Version.V1_0), b"NACK\nmessage-id:1\n\n\x00")
    assert frame.header("message") == "NACK frame #2: NACK is not part of STOMP 1.0"


@pytest.mark.parametrize(
    ("version", "ack", "valid"),
    [
        (Version.V1_2, "auto", True),
        (Version.V1_2, "client", True),
        (Version.V1_2, "client-individual", True),
        (Version.V1_1, "client-individual", True),
        (Version.V1_0, "client-individual", False),
        (Version.V1_0, "client", True),
        (Version.V1_2, "individual", False),
        (Version.V1_2, "Client", False),
        (Version.V1_2, "", False),
    ],
)
def test_subscribe_ack_modes(version: Version, ack: str, valid: bool) -> None:
    data = f"SUBSCRIBE\nid:0\ndestination:/q\nack:{ack}\n\n\x00".encode()
    if valid:
        assert len(list(connected(version).feed(data))) == 1
    else:
        frame = answer(connected(version), data)
        assert f"ack {ack!r} is not one of auto, client" in frame.header("message")


def test_disconnect_allows_its_receipt_then_nothing_more() -> None:
    connection = connected()
    frame, heart_beat = connection.feed(b"DISCONNECT\nreceipt:bye\n\n\x00\n\n")
    assert (frame, heart_beat) == (Frame("DISCONNECT", (("receipt", "bye"),)), HeartBeat())
    assert connection.state is ServerState.DISCONNECTED
    assert list(connection.feed(b"\n")) == [HeartBeat()]
    with pytest.raises(StompUsageError, match="cannot send MESSAGE while DISCONNECTED"):
        connection.send(
            Frame("MESSAGE", (("destination", "/q"), ("message-id", "1"), ("subscription", "0")))
        )
    assert connection.send(receipt_frame("bye")) == b"RECEIPT\nreceipt-id:bye\n\n\x00\n"
    frame = answer(connection, b"SEND\ndestination:/q\n\n\x00")
    assert frame.header("message") == "SEND frame #3: received after DISCONNECT"


def test_parser_errors_come_out_of_feed_and_are_answered_without_receipt() -> None:
    connection = connected()
    frame = answer(connection, b"SEND\nreceipt:r\nno colon here\n\n\x00")
    assert frame.header("receipt-id") is None
    assert "header line 2 b'no colon here' has no colon" in frame.header("message")


def test_messages_go_out_in_the_negotiated_escaping() -> None:
    connection = connected(Version.V1_1)
    message = Frame(
        "MESSAGE", (("destination", "/q"), ("message-id", "ID:1"), ("subscription", "0")), b"x"
    )
    assert connection.send(message) == (
        b"MESSAGE\ndestination:/q\nmessage-id:ID\\c1\nsubscription:0\ncontent-length:1\n\nx\x00\n"
    )


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (
            Frame("MESSAGE", (("destination", "/q"), ("message-id", "1"))),
            "MESSAGE frame lacks header 'subscription'",
        ),
        (Frame("RECEIPT"), "RECEIPT frame lacks header 'receipt-id'"),
        (Frame("CONNECTED", (("version", "1.2"),)), "CONNECTED is sent by accept"),
        (Frame("SEND", (("destination", "/q"),)), "SEND is not a frame a server sends"),
    ],
)
def test_sending_what_the_protocol_forbids_is_a_usage_error(frame: Frame, reason: str) -> None:
    with pytest.raises(StompUsageError, match=reason):
        connected().send(frame)


def test_before_connected_only_an_error_may_be_sent_and_verbatim() -> None:
    connection = ServerConnection()
    with pytest.raises(StompUsageError, match="cannot send MESSAGE while AWAITING_CONNECT"):
        connection.send(
            Frame("MESSAGE", (("destination", "/q"), ("message-id", "1"), ("subscription", "0")))
        )
    with pytest.raises(StompUsageError, match="cannot send RECEIPT while AWAITING_CONNECT"):
        connection.send(receipt_frame("r"))
    with pytest.raises(StompUsageError, match="accept\\(\\) needs a pending ConnectRequest"):
        connection.accept()
    list(connection.feed(CONNECT_1_2))
    data = connection.send(error_frame("bad login: a\\b", receipt="r:1"))
    assert data.startswith(b"ERROR\nmessage:bad login: a\\b\nreceipt-id:r:1\n")
    assert connection.state is ServerState.CLOSED


def test_after_an_error_nothing_more_is_read_or_written() -> None:
    connection = connected()
    connection.send(error_frame("broker says no"))
    with pytest.raises(StompUsageError, match="the connection is closed"):
        connection.feed(b"SEND\n\n\x00")
    with pytest.raises(StompUsageError, match="cannot send ERROR: the connection is closed"):
        connection.send(error_frame("again"))


def test_an_error_sent_while_iterating_stops_the_iteration() -> None:
    connection = connected()
    events = connection.feed(b"SEND\ndestination:/q\n\n\x00SEND\ndestination:/q\n\n\x00")
    next(events)
    connection.send(error_frame("quota exceeded"))
    with pytest.raises(StompUsageError, match="the connection is closed"):
        next(events)


@given(receipt_id=st.text())
@pytest.mark.parametrize("version", list(Version))
def test_receipt_writes_what_send_writes_for_the_receipt_frame(
    version: Version, receipt_id: str
) -> None:
    connection = connected(version)
    try:
        expected: bytes | type[Exception] = connection.send(receipt_frame(receipt_id))
    except ValueError:
        expected = ValueError
    if expected is ValueError:
        with pytest.raises(ValueError):
            connection.receipt(receipt_id)
    else:
        assert connection.receipt(receipt_id) == expected


def test_receipt_after_disconnect_and_after_an_error() -> None:
    connection = connected()
    connection.feed(b"DISCONNECT\nreceipt:bye\n\n\x00")
    list(connection.feed(b""))
    assert connection.receipt("bye") == b"RECEIPT\nreceipt-id:bye\n\n\x00\n"
    connection.send(error_frame("gone"))
    with pytest.raises(StompUsageError, match="the connection is closed"):
        connection.receipt("late")
