"""The JMS message model: headers, typed properties, the five body types, and their codec.

Pure: no I/O, no threads, nothing above ``jms.types``/``jms.errors`` imported.
"""

from jms.message.bytes import BytesMessage
from jms.message.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from jms.message.map import MapMessage
from jms.message.message import JMSX_PROPERTY_TYPES, DeliveryMode, Message
from jms.message.object import DEFAULT_ALLOWED_CLASSES, ObjectMessage
from jms.message.stream import StreamMessage
from jms.message.text import TextMessage

__all__ = [
    "DEFAULT_ALLOWED_CLASSES",
    "JMSX_PROPERTY_TYPES",
    "BytesMessage",
    "DeliveryMode",
    "Destination",
    "MapMessage",
    "Message",
    "ObjectMessage",
    "Queue",
    "StreamMessage",
    "TemporaryQueue",
    "TemporaryTopic",
    "TextMessage",
    "Topic",
]
