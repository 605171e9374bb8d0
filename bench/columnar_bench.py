"""Codec bytes to Arrow and back: ``encoded_to_arrow`` against ``to_arrow([decode(m) ...])``, and
``arrow_to_encoded`` against ``[encode(m) for m in from_arrow(batch)]``.

100,000 PERSISTENT 1 KiB TextMessages with a message ID, a destination, a timestamp and three
typed properties (an int, a String, a double), encoded once. The baseline, measured in the same
run, decodes each into a ``Message`` and builds the rows with ``to_arrow`` (what the Spark source
did); ``encoded_to_arrow`` reads the bytes straight into Arrow. Both run in batches of 1,000 and
10,000 messages (a source page); the best of ``--repeat`` runs counts. Times are CPU time of this
process (``time.process_time``, every thread counted), which a machine shared with other work
disturbs far less than wall time; messages per CPU second is the source's cost. The second table
is the sink's direction: the same messages as ``MESSAGE_SCHEMA`` Arrow batches, encoded by
``arrow_to_encoded`` (column by column) against ``from_arrow`` and ``encode`` (a message per row,
what a sink task did). The third table does the same for rows of three shapes: the same
messages with two optional properties (``color`` in every other message, ``price`` in three of
four), which ``arrow_to_encoded`` encodes shape by shape. The next two tables take both
directions for MapMessages of five entries (a String, a double, a long, a boolean, a byte
array), the last two for StreamMessages of six values (a String, a float, a double, a long, a
char, a boolean) with a reply-to and a float property.
Run: ``python bench/columnar_bench.py [--messages 100000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from rich.console import Console
from rich.table import Table

from jms.message import MapMessage, Queue, StreamMessage, TemporaryQueue, TextMessage
from jms.message.codec import decode, encode
from jms.spark.arrow_encode import arrow_to_encoded
from jms.spark.columnar import encoded_to_arrow
from jms.spark.rows import from_arrow, to_arrow

BATCH_SIZES = (1_000, 10_000)


def encoded_messages(count: int, optional: bool = False) -> list[bytes]:
    """The bench's messages; with ``optional``, ``color`` and ``price`` only in some of them."""
    encoded = []
    for number in range(count):
        message = TextMessage(f"{number:08d}" + "x" * 1016)
        message.set_jms_message_id(f"ID:broker-1:42:1:{number}")
        message.set_jms_timestamp(1_763_769_600_000 + number)
        message.set_jms_destination(Queue("orders"))
        message.set_jms_delivery_mode(2)  # PERSISTENT
        message.set_int_property("quantity", number % 1000)
        if not optional or number % 2 == 0:
            message.set_string_property("color", ("blue", "red", "green")[number % 3])
        if not optional or number % 4 != 3:
            message.set_double_property("price", number / 100)
        encoded.append(encode(message))
    return encoded


def map_messages(count: int) -> list[bytes]:
    """MapMessages of a trade: five entries (a String, a double, a long, a boolean, a byte
    array), a message ID, a timestamp, a destination and one int property."""
    encoded = []
    for number in range(count):
        message = MapMessage()
        message.set_string("symbol", ("ACME", "INIT", "GLOBEX")[number % 3])
        message.set_double("price", 100 + number / 100)
        message.set_long("quantity", number % 5000)
        message.set_boolean("buy", number % 2 == 0)
        message.set_bytes("venue", b"XNYS")
        message.set_jms_message_id(f"ID:broker-1:42:1:{number}")
        message.set_jms_timestamp(1_763_769_600_000 + number)
        message.set_jms_destination(Queue("trades"))
        message.set_int_property("desk", number % 7)
        encoded.append(encode(message))
    return encoded


def stream_messages(count: int) -> list[bytes]:
    """StreamMessages of a sensor reading sent as a request: six values (a String, a float, a
    double, a long, a char, a boolean), a reply-to temporary queue, a message ID, a timestamp, a
    destination and a float property."""
    encoded = []
    for number in range(count):
        message = StreamMessage()
        message.write_string(f"sensor-{number % 50}")
        message.write_float(20 + number % 100 / 8)
        message.write_double(1013.25 + number / 1000)
        message.write_long(1_763_769_600_000 + number)
        message.write_char("C")
        message.write_boolean(number % 2 == 0)
        message.set_jms_reply_to(TemporaryQueue("ID:client-1:1:replies"))
        message.set_jms_message_id(f"ID:broker-1:42:1:{number}")
        message.set_jms_timestamp(1_763_769_600_000 + number)
        message.set_jms_destination(Queue("readings"))
        message.set_float_property("threshold", 25.5)
        encoded.append(encode(message))
    return encoded


def decode_only(batch: Sequence[bytes]) -> None:
    """For scale: the decode calls of the baseline without building any Arrow."""
    for data in batch:
        decode(data)


def baseline(batch: Sequence[bytes]) -> pa.RecordBatch:
    return to_arrow([decode(data) for data in batch]).combine_chunks().to_batches()[0]


def encode_by_message(batch: pa.RecordBatch) -> list[bytes]:
    return [encode(message) for message in from_arrow(batch)]


def encode_by_column(batch: pa.RecordBatch) -> list[bytes] | None:
    return arrow_to_encoded(batch, None)


def best_rate(
    convert: Callable[[Any], object], batches: Sequence[Any], count: int, repeat: int
) -> float:
    """Messages per CPU second of the fastest of ``repeat`` passes over ``batches`` (``count``
    messages in all)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for batch in batches:
            convert(batch)
        best = min(best, time.process_time() - started)
    return count / best


def sliced(encoded: list[bytes], batch_size: int) -> list[list[bytes]]:
    return [encoded[start : start + batch_size] for start in range(0, len(encoded), batch_size)]


def to_arrow_table(title: str, encoded: list[bytes], repeat: int) -> Table:
    """``encoded_to_arrow`` against ``to_arrow(decode)`` on ``encoded``, in pages of each
    size."""
    sample = encoded[:1_000]
    if not encoded_to_arrow(sample).equals(baseline(sample)):
        raise SystemExit("encoded_to_arrow and the baseline disagree on the bench messages")
    table = Table(title=title)
    table.add_column("batch size", justify="right")
    table.add_column("to_arrow(decode) msg/CPU-s", justify="right")
    table.add_column("encoded_to_arrow msg/CPU-s", justify="right")
    table.add_column("speed-up", justify="right")
    for batch_size in BATCH_SIZES:
        pages = sliced(encoded, batch_size)
        slow = best_rate(baseline, pages, len(encoded), repeat)
        fast = best_rate(encoded_to_arrow, pages, len(encoded), repeat)
        table.add_row(f"{batch_size:,}", f"{slow:,.0f}", f"{fast:,.0f}", f"{fast / slow:.1f}x")
    return table


def to_bytes_table(title: str, encoded: list[bytes], repeat: int) -> Table:
    """``arrow_to_encoded`` against ``from_arrow`` and ``encode`` on ``encoded``'s messages as
    ``MESSAGE_SCHEMA`` batches of each size."""
    table = Table(title=title)
    table.add_column("batch size", justify="right")
    table.add_column("from_arrow + encode msg/CPU-s", justify="right")
    table.add_column("arrow_to_encoded msg/CPU-s", justify="right")
    table.add_column("speed-up", justify="right")
    for batch_size in BATCH_SIZES:
        batches = [encoded_to_arrow(page) for page in sliced(encoded, batch_size)]
        if encode_by_column(batches[0]) != encode_by_message(batches[0]):
            raise SystemExit("arrow_to_encoded and the baseline disagree on the bench messages")
        slow = best_rate(encode_by_message, batches, len(encoded), repeat)
        fast = best_rate(encode_by_column, batches, len(encoded), repeat)
        table.add_row(f"{batch_size:,}", f"{slow:,.0f}", f"{fast:,.0f}", f"{fast / slow:.1f}x")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    encoded = encoded_messages(arguments.messages)
    count = len(encoded)
    console = Console()
    console.print(
        to_arrow_table(
            f"codec bytes → Arrow: {count:,} PERSISTENT 1 KiB TextMessages, 3 typed properties",
            encoded,
            arguments.repeat,
        )
    )
    console.print(
        to_bytes_table(
            "Arrow → codec bytes (a sink task's work), the same messages", encoded, arguments.repeat
        )
    )
    console.print(
        to_bytes_table(
            "Arrow → codec bytes, rows of three shapes (two optional properties)",
            encoded_messages(arguments.messages, optional=True),
            arguments.repeat,
        )
    )
    maps = map_messages(arguments.messages)
    console.print(
        to_arrow_table("codec bytes → Arrow: MapMessages of five entries", maps, arguments.repeat)
    )
    console.print(
        to_bytes_table("Arrow → codec bytes: the same MapMessages", maps, arguments.repeat)
    )
    streams = stream_messages(arguments.messages)
    console.print(
        to_arrow_table(
            "codec bytes → Arrow: StreamMessages of six values, a reply-to, a float property",
            streams,
            arguments.repeat,
        )
    )
    console.print(
        to_bytes_table("Arrow → codec bytes: the same StreamMessages", streams, arguments.repeat)
    )
    decoding = best_rate(decode_only, sliced(encoded, BATCH_SIZES[-1]), count, arguments.repeat)
    console.print(
        f"For scale: decode alone, no Arrow, {decoding:,.0f} msg/CPU-s in this run "
        "(CPU time, so a shared machine disturbs it less than wall time, but it still slows it)."
    )


if __name__ == "__main__":
    main()
