"""The JMS client API: ``ConnectionFactory``, ``Connection``, ``Session``, ``MessageProducer``,
``MessageConsumer``, ``QueueBrowser``, the JMS 2.0 ``JMSContext``/``JMSProducer``/``JMSConsumer``,
the ``Requestor`` helper for request/reply, and ``SequenceReader`` (reading a queue or durable
subscription by sequence number range, with a cursor commit; ``EncodedPage`` is a page of its
messages left as codec bytes) for offset-based readers, and
``Session.stage_encoded`` and ``Session.publish_staged`` (with ``StagedRange`` and
``BatchMarker`` from ``jms.broker.staging``) for writers that stage messages and publish them
atomically.

One implementation over a ``Transport``; ``memory://`` URLs use the in-process broker registry of
``jms.broker``. The client stamps headers and keeps acknowledgement bookkeeping; routing and
delivery decisions are the broker's.
"""

from jms.broker.staging import BatchMarker, StagedRange
from jms.client.browser import QueueBrowser
from jms.client.completion import CompletionListener
from jms.client.connection import Connection, ConnectionMetaData, ExceptionListener
from jms.client.consumer import MessageConsumer, MessageListener
from jms.client.context import JMSConsumer, JMSContext, JMSProducer
from jms.client.factory import ConnectionFactory
from jms.client.options import ClientOptions
from jms.client.producer import MessageProducer
from jms.client.requestor import Requestor
from jms.client.sequence_reader import EncodedPage, SequenceReader
from jms.client.session import Session
from jms.client.transport import RangeSource, TopicSubscription, Transport

__all__ = [
    "BatchMarker",
    "ClientOptions",
    "CompletionListener",
    "Connection",
    "ConnectionFactory",
    "ConnectionMetaData",
    "EncodedPage",
    "ExceptionListener",
    "JMSConsumer",
    "JMSContext",
    "JMSProducer",
    "MessageConsumer",
    "MessageListener",
    "MessageProducer",
    "QueueBrowser",
    "RangeSource",
    "Requestor",
    "SequenceReader",
    "Session",
    "StagedRange",
    "TopicSubscription",
    "Transport",
]
