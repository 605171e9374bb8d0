"""The client API tests of ``tests/client``, run again with every connection going over STOMP to
a ``StompServer`` in front of the test's broker (fixtures in this folder's conftest). The one
test about an in-process broker going away is replaced by its network version."""

import time

import pytest

from jms.broker import Broker
from jms.client import ConnectionFactory
from jms.errors import IllegalStateException, JMSException
from tests.client.test_acknowledgement import *  # noqa: F403
from tests.client.test_async_send import *  # noqa: F403
from tests.client.test_browse_request_select import *  # noqa: F403
from tests.client.test_context import *  # noqa: F403
from tests.client.test_destinations import *  # noqa: F403
from tests.client.test_flow_control import *  # noqa: F403
from tests.client.test_jms_forms import *  # noqa: F403
from tests.client.test_lifecycle import *  # noqa: F403
from tests.client.test_ordering_and_time import *  # noqa: F403
from tests.client.test_receive_body import *  # noqa: F403
from tests.client.test_redelivery import *  # noqa: F403
from tests.client.test_send_headers import *  # noqa: F403


def test_the_exception_listener_hears_when_the_broker_goes(
    factory: ConnectionFactory, broker: Broker
) -> None:
    connection = factory.create_connection()
    heard: list[JMSException] = []
    connection.set_exception_listener(heard.append)
    broker.close()
    deadline = time.monotonic() + 5
    while not heard and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(heard) == 1 and "was closed" in heard[0].reason
    with pytest.raises(IllegalStateException, match="closed by the broker"):
        connection.create_session()
    connection.close()
