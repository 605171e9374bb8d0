"""The ``SequenceReader`` tests of ``tests/client`` over STOMP: range reads, durable subscription
reads and cursor commits crossing the wire (docs/stomp.md, "Range reads")."""

from tests.client.test_sequence_reader import *  # noqa: F403
