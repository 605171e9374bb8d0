"""Codec speed: encode+decode of a 1 KiB TextMessage with 10 properties, next to pickle.

The baseline is ``pickle.dumps``/``pickle.loads`` (protocol 5, C accelerated) of a plain dict with
the same headers, properties and text, measured in the same run. Run: ``python bench/codec_bench.py``.
"""

from __future__ import annotations

import pickle
import timeit

from rich.console import Console
from rich.table import Table

from jms.message import Queue, TextMessage
from jms.message.codec import decode, encode
from jms.types import Double, Int, Long


def build_message() -> TextMessage:
    message = TextMessage("x" * 1024)
    message.set_jms_message_id("ID:broker-1:42:1:1")
    message.set_jms_timestamp(1_763_769_600_000)
    message.set_jms_destination(Queue("orders"))
    message.set_jms_type("car")
    message.set_jms_correlation_id("req-17")
    for index in range(4):
        message.set_object_property(f"count{index}", Int(index * 1000))
    message.set_object_property("weight", Long(3000))
    message.set_object_property("price", Double(19.99))
    message.set_string_property("color", "blue")
    message.set_string_property("region", "EMEA")
    message.set_boolean_property("priorityCustomer", True)
    message.set_string_property("JMSXGroupID", "customer-42")
    return message


def equivalent_dict(message: TextMessage) -> dict[str, object]:
    return {
        "message_id": message.get_jms_message_id(),
        "timestamp": message.get_jms_timestamp(),
        "destination": str(message.get_jms_destination()),
        "type": message.get_jms_type(),
        "correlation_id": message.get_jms_correlation_id(),
        "delivery_mode": message.get_jms_delivery_mode(),
        "priority": message.get_jms_priority(),
        "expiration": 0,
        "delivery_time": 0,
        "redelivered": False,
        "properties": {
            name: message.get_object_property(name) for name in message.get_property_names()
        },
        "text": message.get_text(),
    }


def per_call_ns(function: object, repeat: int = 5, number: int = 20_000) -> float:
    return min(timeit.repeat(function, repeat=repeat, number=number)) / number * 1e9  # type: ignore[arg-type]


def main() -> None:
    message = build_message()
    typed = equivalent_dict(message)
    # The same dict with plain int/float values: smaller and faster to pickle, but the Java types
    # (int vs long, float vs double) are lost, so it carries less than the message does.
    plain = dict(typed)
    plain["properties"] = {
        name: value
        if isinstance(value, str | bool)
        else (float if isinstance(value, float) else int)(value)
        for name, value in typed["properties"].items()  # type: ignore[union-attr]
    }
    encoded = encode(message)
    baselines = {"typed": typed, "plain": plain}
    pickled = {name: pickle.dumps(value, protocol=5) for name, value in baselines.items()}
    ours = {
        "encode": per_call_ns(lambda: encode(message)),
        "decode": per_call_ns(lambda: decode(encoded)),
        "encode+decode": per_call_ns(lambda: decode(encode(message))),
    }
    theirs = {
        name: {
            "encode": per_call_ns(lambda value=value: pickle.dumps(value, protocol=5)),
            "decode": per_call_ns(lambda name=name: pickle.loads(pickled[name])),
            "encode+decode": per_call_ns(
                lambda value=value: pickle.loads(pickle.dumps(value, protocol=5))
            ),
        }
        for name, value in baselines.items()
    }
    table = Table(title="jms codec vs pickle (1 KiB TextMessage, 10 properties)")
    table.add_column("operation")
    table.add_column("jms codec ns", justify="right")
    table.add_column("pickle, typed values ns", justify="right")
    table.add_column("ratio", justify="right")
    table.add_column("pickle, plain values ns", justify="right")
    table.add_column("ratio", justify="right")
    for operation, ns in ours.items():
        typed_ns = theirs["typed"][operation]
        plain_ns = theirs["plain"][operation]
        table.add_row(
            operation,
            f"{ns:,.0f}",
            f"{typed_ns:,.0f}",
            f"{ns / typed_ns:.2f}x",
            f"{plain_ns:,.0f}",
            f"{ns / plain_ns:.2f}x",
        )
    console = Console()
    console.print(table)
    console.print(
        f"size: jms {len(encoded)} bytes, pickle typed {len(pickled['typed'])} bytes, "
        f"pickle plain {len(pickled['plain'])} bytes. 'typed' pickles the same information "
        "(jms.types values); 'plain' drops the Java types. Goal: encode+decode <= 1.5x pickle."
    )


if __name__ == "__main__":
    main()
