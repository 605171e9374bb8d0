"""The broker's CPU per message for staged publishing, in process (no sockets, no Spark):
``Broker.stage_encoded`` of N codec-encoded TextMessages (a ``--size``-character text and three
typed properties, as ``sink_bench.py`` writes them) in requests of ``--request`` messages into
one staging queue on a fresh SQLite store, then one ``Broker.publish_staged`` of them all with a
batch marker. CPU time of the whole process (the store's writer thread included) per message,
best of ``--repeat`` runs, next to the baseline of ``codec.decode`` of each encoding once (what
staging must do at least: it checks every message it stores).

    python bench/staging_bench.py [--messages 30000] [--size 1024] [--request 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from jms.broker import BatchMarker, Broker, StagedRange
from jms.message import Queue, TextMessage
from jms.message.codec import decode, encode
from jms.store.sqlite import SQLiteStore


def encodings(count: int, size: int) -> list[bytes]:
    encoded = []
    for n in range(count):
        message = TextMessage("x" * size)
        message.set_jms_destination(Queue("out"))
        message.set_long_property("n", n)
        message.set_string_property("region", ("eu", "us", "apac")[n % 3])
        message.set_boolean_property("urgent", n % 10 == 0)
        encoded.append(encode(message))
    return encoded


def run(encoded: list[bytes], request: int) -> tuple[float, float]:
    """(stage, publish) CPU seconds of one run on a fresh store."""
    staging = Queue("staging.p0")
    with tempfile.TemporaryDirectory(prefix="jms-staging-bench-") as directory:
        broker = Broker(SQLiteStore(directory))
        try:
            connection = broker.connect()
            began = time.process_time()
            for start in range(0, len(encoded), request):
                broker.stage_encoded(connection, staging, encoded[start : start + request])
            staged = time.process_time()
            published = broker.publish_staged(
                connection,
                [StagedRange(staging, 1, len(encoded))],
                BatchMarker(Queue("markers"), 1),
            )
            done = time.process_time()
        finally:
            broker.close()
    assert published == len(encoded), published
    return staged - began, done - staged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=30_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--request", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    encoded = encodings(args.messages, args.size)
    runs = [run(encoded, args.request) for _ in range(args.repeat)]
    decoding = []
    for _ in range(args.repeat):
        began = time.process_time()
        for item in encoded:
            decode(item)
        decoding.append(time.process_time() - began)
    stage = min(seconds for seconds, _ in runs) / args.messages * 1e6
    publish = min(seconds for _, seconds in runs) / args.messages * 1e6
    print(f"{args.messages:,} messages of {args.size} characters, requests of {args.request:,}")
    print(f"decode (baseline): {min(decoding) / args.messages * 1e6:6.1f} µs CPU per message")
    print(f"stage_encoded:     {stage:6.1f} µs CPU per message")
    print(f"publish_staged:    {publish:6.1f} µs CPU per message")


if __name__ == "__main__":
    main()
