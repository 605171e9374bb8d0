"""The frame model and its wire form: escaping per version, content-length, what is refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jms.stomp import (
    Frame,
    Role,
    StompProtocolError,
    Version,
    encode_frame,
    error_frame,
    escape_header,
    parse_content_length,
    receipt_frame,
    unescape_header,
)
from tests.stomp.stomp_testing import parse

TRICKY = "a\\b:c\nd\re"


@pytest.mark.parametrize(
    ("version", "escaped"),
    [
        (Version.V1_0, TRICKY),
        (Version.V1_1, "a\\\\b\\cc\\nd\re"),
        (Version.V1_2, "a\\\\b\\cc\\nd\\re"),
    ],
)
def test_each_version_escapes_its_own_set(version: Version, escaped: str) -> None:
    assert escape_header(TRICKY, version) == escaped
    assert unescape_header(escaped, version) == TRICKY


@pytest.mark.parametrize("version", [Version.V1_1, Version.V1_2])
def test_a_backslash_before_n_stays_a_backslash_and_an_n(version: Version) -> None:
    assert escape_header("\\n", version) == "\\\\n"
    assert unescape_header("\\\\n", version) == "\\n"
    assert unescape_header("\\\\\\n", version) == "\\\n"


@pytest.mark.parametrize(
    ("version", "text"),
    [
        (Version.V1_1, "tab\\there"),
        (Version.V1_2, "tab\\there"),
        (Version.V1_1, "carriage\\rreturn"),  # \r is 1.2's
        (Version.V1_2, "trailing\\"),
        (Version.V1_2, "\\C"),
        (Version.V1_2, "\\:"),
    ],
)
def test_undefined_escapes_are_a_protocol_error(version: Version, text: str) -> None:
    with pytest.raises(StompProtocolError, match="undefined escape sequence"):
        unescape_header(text, version)


def test_stomp_1_0_reads_backslashes_verbatim() -> None:
    assert unescape_header("tab\\there\\", Version.V1_0) == "tab\\there\\"


def test_a_body_gets_a_content_length_and_headers_are_escaped() -> None:
    frame = Frame("SEND", (("destination", "/queue/a"), ("key", "a:b\nc")), b"hi\x00there")
    assert frame.to_bytes(Version.V1_2) == (
        b"SEND\ndestination:/queue/a\nkey:a\\cb\\nc\ncontent-length:8\n\nhi\x00there\x00\n"
    )


def test_no_body_means_no_content_length() -> None:
    assert Frame("SEND", (("destination", "/queue/a"),)).to_bytes(Version.V1_2) == (
        b"SEND\ndestination:/queue/a\n\n\x00\n"
    )


def test_a_matching_content_length_is_kept_where_it_is() -> None:
    frame = Frame("MESSAGE", (("content-length", "002"), ("destination", "/q")), b"ab")
    assert (
        frame.to_bytes(Version.V1_1) == b"MESSAGE\ncontent-length:002\ndestination:/q\n\nab\x00\n"
    )


def test_a_wrong_content_length_is_refused() -> None:
    with pytest.raises(ValueError, match="content-length:'3' but its body has 2 bytes"):
        Frame("SEND", (("content-length", "3"),), b"ab").to_bytes(Version.V1_2)


@pytest.mark.parametrize("command", ["CONNECT", "STOMP", "CONNECTED"])
def test_connect_frames_are_never_escaped(command: str) -> None:
    frame = Frame(command, (("passcode", "a\\b:c"),))
    assert b"passcode:a\\b:c\n" in frame.to_bytes(Version.V1_2)


def test_stomp_1_0_writes_colons_in_values_as_they_are() -> None:
    frame = Frame("MESSAGE", (("message-id", "ID:host-1:2"),))
    assert frame.to_bytes(Version.V1_0) == b"MESSAGE\nmessage-id:ID:host-1:2\n\n\x00\n"
    assert parse(frame.to_bytes(Version.V1_0), Role.SERVER, Version.V1_0) == [frame]


def test_repeated_headers_keep_their_order_and_the_first_is_the_value() -> None:
    frame = Frame("MESSAGE", (("foo", "World"), ("foo", "Hello")))
    assert frame.to_bytes(Version.V1_2) == b"MESSAGE\nfoo:World\nfoo:Hello\n\n\x00\n"
    assert frame.header("foo") == "World"
    assert frame.header("bar") is None


@pytest.mark.parametrize(
    ("frame", "version", "reason"),
    [
        (Frame("SEND", (("a", "line\nfeed"),)), Version.V1_0, "cannot be written in STOMP 1.0"),
        (Frame("SEND", (("a:b", "v"),)), Version.V1_0, "cannot be written in STOMP 1.0"),
        (Frame("SEND", (("a", "v\r"),)), Version.V1_0, "cannot be written in STOMP 1.0"),
        (Frame("SEND", (("a", "v\r"),)), Version.V1_1, "cannot be written in STOMP 1.1"),
        (Frame("CONNECT", (("a", "x\ny"),)), Version.V1_2, "never escaped"),
        (Frame("CONNECTED", (("a:b", "v"),)), Version.V1_2, "never escaped"),
        (Frame("SEND", (("", "v"),)), Version.V1_2, "empty name"),
        (Frame("SEND", (("a", "\ud800"),)), Version.V1_2, "not valid Unicode"),
        (Frame("FETCH"), Version.V1_2, "unknown STOMP command 'FETCH'"),
        (Frame("send"), Version.V1_2, "unknown STOMP command 'send'"),
        (Frame("SUBSCRIBE", (), b"x"), Version.V1_2, "a SUBSCRIBE frame may not have a body"),
        (Frame("RECEIPT", (), b"x"), Version.V1_2, "a RECEIPT frame may not have a body"),
    ],
    ids=repr,
)
def test_what_a_version_cannot_carry_is_refused(
    frame: Frame, version: Version, reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        frame.to_bytes(version)


def test_stomp_1_2_escapes_what_1_0_cannot_carry() -> None:
    frame = Frame("SEND", (("a:b", "v\r"), ("c", "line\nfeed")))
    assert frame.to_bytes(Version.V1_2) == b"SEND\na\\cb:v\\r\nc:line\\nfeed\n\n\x00\n"
    assert parse(frame.to_bytes(Version.V1_2)) == [frame]


@pytest.mark.parametrize(
    ("text", "count"),
    [("0", 0), ("7", 7), ("007", 7), ("10485760", 10485760)],
)
def test_content_length_is_a_decimal_count(text: str, count: int) -> None:
    assert parse_content_length(text) == count


@pytest.mark.parametrize("text", ["", "-1", "+1", " 1", "1 ", "0x10", "1.0", "١", "²"])
def test_anything_else_is_not_a_content_length(text: str) -> None:
    assert parse_content_length(text) is None


def test_an_absurd_content_length_reads_as_huge_without_converting_it() -> None:
    count = parse_content_length("9" * 100_000)
    assert count is not None and count > 10**17


def test_error_frame_has_a_one_line_message_header_and_the_full_text_as_body() -> None:
    frame = error_frame(
        "bad frame\nsecond line", receipt="r-1", extra_headers=(("version", "1.0,1.1,1.2"),)
    )
    assert frame.command == "ERROR"
    assert frame.headers == (
        ("message", "bad frame second line"),
        ("receipt-id", "r-1"),
        ("version", "1.0,1.1,1.2"),
        ("content-type", "text/plain"),
    )
    assert frame.body == b"bad frame\nsecond line"
    # One line, so it can be written before any version is agreed.
    assert frame.to_bytes(Version.V1_0).startswith(b"ERROR\nmessage:bad frame second line\n")


def test_error_frame_without_receipt_has_no_receipt_id() -> None:
    assert error_frame("oops").header("receipt-id") is None


def test_receipt_frame_names_the_receipt() -> None:
    assert receipt_frame("77").to_bytes(Version.V1_2) == b"RECEIPT\nreceipt-id:77\n\n\x00\n"


_texts = st.text(st.sampled_from("ab:\\\n\r\x00\x01é"), max_size=6)


@given(
    st.lists(st.tuples(_texts.filter(bool), _texts), max_size=5),
    st.sampled_from([Version.V1_1, Version.V1_2]),
)
def test_a_header_block_is_escaped_as_each_header_alone_would_be(
    headers: list[tuple[str, str]], version: Version
) -> None:
    """The block is escaped in one piece with stand-in characters; names and values that hold
    those characters (or anything else) come out as escaping each of them alone gives."""
    if version is Version.V1_1 and any(value.endswith("\r") for _, value in headers):
        with pytest.raises(ValueError, match=r"cannot be written in STOMP 1\.1"):
            encode_frame("SEND", headers, b"", version)
        return
    lines = "".join(
        f"{escape_header(name, version)}:{escape_header(value, version)}\n"
        for name, value in headers
    )
    assert encode_frame("SEND", headers, b"", version) == f"SEND\n{lines}\n".encode() + b"\0\n"


def test_an_empty_header_name_is_refused_wherever_it_is() -> None:
    for headers in ([("", "v")], [("a", "b"), ("", "v")]):
        with pytest.raises(ValueError, match="a header with an empty name"):
            encode_frame("SEND", headers, b"", Version.V1_2)


def test_the_header_map_keeps_the_first_value_of_a_repeated_header() -> None:
    frame = Frame("MESSAGE", (("foo", "World"), ("bar", "1"), ("foo", "Hello")))
    assert frame.header_map() == {"foo": "World", "bar": "1"}
    assert list(frame.header_map()) == ["foo", "bar"]
    assert Frame("SEND", (("a", "1"),)).header_map() == {"a": "1"}
