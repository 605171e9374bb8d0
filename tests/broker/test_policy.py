"""DestinationPolicy and PolicyMap: redelivery delays, dead-letter names, precedence, validation."""

from __future__ import annotations

import pytest

from jms.broker.policy import DestinationPolicy, PolicyMap


def test_redelivery_delay_backs_off_up_to_the_cap() -> None:
    policy = DestinationPolicy(
        redelivery_delay_ms=100, redelivery_backoff=2.0, max_redelivery_delay_ms=500
    )
    assert [policy.redelivery_delay(n) for n in range(0, 6)] == [0, 100, 200, 400, 500, 500]


def test_no_redelivery_delay_by_default() -> None:
    assert DestinationPolicy().redelivery_delay(3) == 0


def test_dead_letter_queue_is_per_destination_unless_shared() -> None:
    assert DestinationPolicy().dead_letter_queue_for("orders") == "DLQ.orders"
    shared = DestinationPolicy(dead_letter_queue="DEAD")
    assert shared.dead_letter_queue_for("orders") == "DEAD"


def test_exact_name_beats_patterns_and_longer_patterns_beat_shorter() -> None:
    policies = PolicyMap()
    everything = DestinationPolicy(max_deliveries=1)
    orders = DestinationPolicy(max_deliveries=2)
    exact = DestinationPolicy(max_deliveries=3)
    policies.set("*", everything)
    policies.set("queue://orders.*", orders)
    policies.set("queue://orders.eu", exact)
    assert policies.for_destination("queue://orders.eu") is exact
    assert policies.for_destination("queue://orders.us") is orders
    assert policies.for_destination("topic://news") is everything


def test_the_default_applies_when_nothing_matches() -> None:
    default = DestinationPolicy(max_deliveries=4)
    policies = PolicyMap(default)
    policies.set("queue://a", DestinationPolicy())
    assert policies.for_destination("queue://b") is default


def test_shared_dead_letter_queues_are_known() -> None:
    policies = PolicyMap(DestinationPolicy(dead_letter_queue="ALL.DEAD"))
    policies.set("queue://x", DestinationPolicy(dead_letter_queue="X.DEAD"))
    assert policies.dead_letter_queue_names() == {"ALL.DEAD", "X.DEAD"}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_deliveries", 0, "max_deliveries must be at least 1"),
        ("redelivery_delay_ms", -1, "redelivery_delay_ms must be >= 0"),
        ("redelivery_backoff", 0.5, "redelivery_backoff must be >= 1.0"),
        ("max_backlog", 0, "max_backlog must be at least 1"),
        ("dead_letter_queue", "", "dead_letter_queue must be a non-empty queue name"),
    ],
)
def test_bad_values_are_refused_saying_which(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DestinationPolicy(**{field: value})  # type: ignore[arg-type]


def test_a_pattern_must_be_a_non_empty_string() -> None:
    with pytest.raises(ValueError, match="non-empty string"):
        PolicyMap().set("", DestinationPolicy())
