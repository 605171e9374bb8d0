"""``failover:`` URLs (jms.client.failover): ActiveMQ's forms and option names, and a clear
error — what is wrong, with which value — for each kind of bad URL."""

from __future__ import annotations

import ssl

import pytest

from jms.client import ConnectionFactory
from jms.client.failover import FailoverOptions, parse_failover_url
from jms.errors import JMSException


def test_the_parenthesised_form_with_options() -> None:
    urls, options = parse_failover_url(
        "failover:(stomp://h1:61613,stomp+ssl://h2:61614)?initialReconnectDelay=100"
        "&maxReconnectDelay=2000&useExponentialBackOff=false&backOffMultiplier=1.5"
        "&maxReconnectAttempts=7&startupMaxReconnectAttempts=-1&randomize=false"
    )
    assert urls == ("stomp://h1:61613", "stomp+ssl://h2:61614")
    assert options == FailoverOptions(
        initialReconnectDelay=100,
        maxReconnectDelay=2000,
        useExponentialBackOff=False,
        backOffMultiplier=1.5,
        maxReconnectAttempts=7,
        startupMaxReconnectAttempts=-1,
        randomize=False,
    )


def test_the_bare_form_and_activemq_defaults() -> None:
    urls, options = parse_failover_url("failover:stomp://h1:1,stomp://h2:2")
    assert urls == ("stomp://h1:1", "stomp://h2:2")
    assert options == FailoverOptions()
    assert (options.initialReconnectDelay, options.maxReconnectDelay) == (10, 30_000)
    assert options.maxReconnectAttempts == -1
    assert parse_failover_url("failover:(stomp://h:1)")[0] == ("stomp://h:1",)


def test_the_delays_grow_by_the_multiplier_up_to_the_maximum() -> None:
    _, options = parse_failover_url(
        "failover:(stomp://h:1)?initialReconnectDelay=100&maxReconnectDelay=500"
    )
    delays = options.delays_ms()
    assert [next(delays) for _ in range(5)] == [100, 200, 400, 500, 500]
    _, flat = parse_failover_url("failover:(stomp://h:1)?useExponentialBackOff=false")
    delays = flat.delays_ms()
    assert [next(delays) for _ in range(3)] == [10, 10, 10]


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("failover:(stomp://h:1", "the '(' before the broker URLs has no ')'"),
        ("failover:(stomp://h:1)x", "expected '?' and options after ')', got 'x'"),
        ("failover:()", "lists an empty broker URL"),
        ("failover:(stomp://h:1,,stomp://h:2)", "lists an empty broker URL"),
        ("failover:(memory://x)", "'memory://x' is not a STOMP broker URL"),
        ("failover:(stomp://h:99999)", "'stomp://h:99999' is not a STOMP broker URL"),
        ("failover:(stomp://h:1)?timeout=5", "unknown option 'timeout'; the options are"),
        (
            "failover:(stomp://h:1)?initialReconnectDelay=soon",
            "option initialReconnectDelay is 'soon'; expected a whole number",
        ),
        (
            "failover:(stomp://h:1)?randomize=yes",
            "option randomize is 'yes'; expected true or false",
        ),
        (
            "failover:(stomp://h:1)?maxReconnectAttempts=-2",
            "option maxReconnectAttempts is -2; expected a count, or -1 for no limit",
        ),
        (
            "failover:(stomp://h:1)?maxReconnectDelay=-1",
            "option maxReconnectDelay is -1; expected milliseconds, 0 or more",
        ),
        (
            "failover:(stomp://h:1)?backOffMultiplier=0.5",
            "option backOffMultiplier is 0.5; expected a number of at least 1",
        ),
        ("failover:(stomp://h:1)?randomize", "option randomize is ''; expected true or false"),
    ],
)
def test_a_bad_failover_url_is_refused_saying_what_and_which_value(url: str, says: str) -> None:
    with pytest.raises(JMSException) as raised:
        ConnectionFactory(url)
    assert says in str(raised.value)
    assert url in str(raised.value)


def test_an_ssl_context_needs_a_stomp_ssl_url_in_the_list() -> None:
    with pytest.raises(JMSException, match="lists none"):
        ConnectionFactory("failover:(stomp://h:1)", ssl_context=ssl.create_default_context())
