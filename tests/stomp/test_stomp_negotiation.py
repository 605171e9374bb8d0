"""Version and heart-beat negotiation, as tables."""

from __future__ import annotations

import pytest

from jms.stomp import (
    MAX_HEART_BEAT_MS,
    HeartBeatIntervals,
    HeartBeatOffer,
    StompProtocolError,
    Version,
    negotiate_heart_beat,
    negotiate_version,
)


@pytest.mark.parametrize(
    ("accept_version", "version"),
    [
        (None, Version.V1_0),
        ("1.0", Version.V1_0),
        ("1.1", Version.V1_1),
        ("1.2", Version.V1_2),
        ("1.0,1.1", Version.V1_1),
        ("1.0,1.1,1.2", Version.V1_2),
        ("1.2,1.0", Version.V1_2),
        ("1.1,2.0", Version.V1_1),
        ("1.0, 1.1", Version.V1_1),
        ("1.2,,", Version.V1_2),
    ],
)
def test_the_highest_common_version_wins(accept_version: str | None, version: Version) -> None:
    assert negotiate_version(accept_version) is version


@pytest.mark.parametrize("accept_version", ["", "2.0", "2.0,3.1", "1", "1.3", "v1.2"])
def test_no_common_version_is_an_error_listing_ours(accept_version: str) -> None:
    with pytest.raises(
        StompProtocolError, match=r"supported protocol versions are 1\.0 1\.1 1\.2"
    ) as caught:
        negotiate_version(accept_version)
    assert caught.value.error_headers == (("version", "1.0,1.1,1.2"),)


@pytest.mark.parametrize(
    ("header", "offer"),
    [
        (None, HeartBeatOffer(0, 0)),
        ("0,0", HeartBeatOffer(0, 0)),
        ("1000,2500", HeartBeatOffer(1000, 2500)),
        ("007,0", HeartBeatOffer(7, 0)),
        (f"{MAX_HEART_BEAT_MS},1", HeartBeatOffer(MAX_HEART_BEAT_MS, 1)),
    ],
)
def test_heart_beat_headers_parse(header: str | None, offer: HeartBeatOffer) -> None:
    assert HeartBeatOffer.parse(header) == offer


@pytest.mark.parametrize(
    "header", ["", "1000", "1000,", ",1000", "1, 2", " 1,2", "1,2,3", "-1,0", "1.5,0", "a,b", "١,٢"]
)
def test_malformed_heart_beat_headers_are_errors(header: str) -> None:
    with pytest.raises(StompProtocolError, match="is not two millisecond counts"):
        HeartBeatOffer.parse(header)


def test_heart_beat_intervals_above_a_java_int_are_errors() -> None:
    with pytest.raises(StompProtocolError, match="interval above 2147483647 ms"):
        HeartBeatOffer.parse(f"0,{MAX_HEART_BEAT_MS + 1}")


def test_an_offer_writes_back_as_its_header() -> None:
    assert HeartBeatOffer(1000, 0).header_value() == "1000,0"
    assert HeartBeatOffer.parse(HeartBeatOffer(5, 6).header_value()) == HeartBeatOffer(5, 6)


@pytest.mark.parametrize("bad", [-1, MAX_HEART_BEAT_MS + 1, True, 1.0])
def test_offers_are_checked_when_built(bad: int) -> None:
    with pytest.raises(ValueError, match=r"HeartBeatOffer\.incoming_ms must be an int"):
        HeartBeatOffer(0, bad)


# Server offers (sx, sy), client offers (cx, cy): the server sends every MAX(sx, cy) unless either
# is 0, and expects the client's data every MAX(cx, sy) unless either is 0.
@pytest.mark.parametrize(
    ("server", "client", "server_sends", "server_expects"),
    [
        ((0, 0), (0, 0), 0, 0),
        ((0, 0), (1000, 1000), 0, 0),
        ((1000, 1000), (0, 0), 0, 0),
        ((1000, 0), (0, 500), 1000, 0),
        ((500, 0), (0, 1000), 1000, 0),
        ((0, 1000), (500, 0), 0, 1000),
        ((0, 500), (1000, 0), 0, 1000),
        ((100, 200), (300, 400), 400, 300),
        ((4000, 4000), (10000, 10000), 10000, 10000),
    ],
)
def test_heart_beat_negotiation_follows_the_max_rule(
    server: tuple[int, int], client: tuple[int, int], server_sends: int, server_expects: int
) -> None:
    server_offer, client_offer = HeartBeatOffer(*server), HeartBeatOffer(*client)
    assert negotiate_heart_beat(server_offer, client_offer) == HeartBeatIntervals(
        server_sends, server_expects
    )
    # The same rule, seen from the client, swaps the two directions.
    assert negotiate_heart_beat(client_offer, server_offer) == HeartBeatIntervals(
        server_expects, server_sends
    )
