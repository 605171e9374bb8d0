"""``format("jms")`` in real Spark jobs against a real broker over STOMP (the broker a ``jms broker``
process runs, with its SQLite store): batch reads split by offset, pushdown, writes, streaming to
Parquet with a checkpoint that survives stopping the query and SIGKILL of the driver process, and
the same source and sink on ``local-cluster[2,1,1024]``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import jms.spark
from _jms_spark_python import fork_server_jvm, served_jvm
from jms.broker import Broker
from jms.client import ConnectionFactory, Session, client_ssl_context
from jms.message import Message, Queue
from jms.spark import MESSAGE_SCHEMA, from_rows, selector_to_column, worker_python
from jms.stomp.service import ServerThread
from jms.stomp.tls import ServerTls
from jms.types import Char, Float, Long
from tests.certificates import make_certificates
from tests.spark.served_broker import ServedStore
from tests.strategies import message_fingerprint

pytestmark = pytest.mark.spark

_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def broker_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ServedStore(tmp_path_factory.mktemp("spark-broker")) as served:
        yield served.url


@pytest.fixture(scope="module")
def jms_spark(spark: SparkSession) -> SparkSession:
    jms.spark.register(spark)
    return spark


@pytest.fixture
def session(broker_url: str) -> Iterator[Session]:
    with ConnectionFactory(broker_url).create_connection() as connection:
        connection.start()
        yield connection.create_session()


def _queue() -> str:
    return f"spark-{uuid.uuid4().hex[:10]}"


def _produce(session: Session, queue: str, count: int, start: int = 0) -> list[Message]:
    producer = session.create_producer(Queue(queue))
    sent = []
    for number in range(start, start + count):
        if number % 4 == 3:
            message: Message = session.create_bytes_message()
            message.write_bytes(number.to_bytes(4, "big"))  # type: ignore[attr-defined]
        else:
            message = session.create_text_message(f"order {number}")
        message.set_long_property("n", Long(number))
        message.set_string_property("region", ("eu", "us", "apac")[number % 3])
        message.set_jms_type("car" if number % 2 else "truck")
        producer.send(message, priority=number % 10)
        sent.append(message)
    return sent


def _read(spark: SparkSession, url: str, queue: str, **options: str) -> DataFrame:
    reader = spark.read.format("jms").option("url", url).option("destination", f"queue://{queue}")
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def _depth(session: Session, queue: str) -> int:
    return len(list(session.create_browser(Queue(queue))))


def test_a_batch_read_is_split_by_offset_and_consumes_nothing(
    jms_spark: SparkSession, broker_url: str, session: Session
) -> None:
    queue = _queue()
    sent = _produce(session, queue, 120)
    frame = _read(jms_spark, broker_url, queue, minPartitions="3", pageSize="25")
    assert frame.schema.simpleString() == MESSAGE_SCHEMA.simpleString()
    assert frame.rdd.getNumPartitions() == 3
    read = from_rows(frame.collect())
    assert sorted(map(message_fingerprint, read)) == sorted(map(message_fingerprint, sent))
    assert _depth(session, queue) == 120
    # Pushed-down filters and the selector option keep exactly what Spark's own filter keeps.
    condition = "priority > 4 AND type = 'car' AND message_id LIKE 'ID:%'"
    pushed = _read(jms_spark, broker_url, queue, selector="region <> 'us'").filter(condition)
    local = jms_spark.createDataFrame(frame.collect(), MESSAGE_SCHEMA).filter(condition)
    local = local.filter(selector_to_column("region <> 'us'"))
    assert sorted(r.message_id for r in pushed.collect()) == sorted(
        r.message_id for r in local.collect()
    )
    assert pushed.count() == 24
    plan = pushed._jdf.queryExecution().executedPlan().toString()
    assert "Filter (" not in plan  # all three conditions went to the broker


def test_a_batch_read_of_nothing_is_an_empty_frame(
    jms_spark: SparkSession, broker_url: str, session: Session
) -> None:
    """A read that plans no partition (an empty queue, or a range past its end) gives no rows:
    PySpark then hands the reader one partition of its own, which reads nothing."""
    queue = _queue()
    session.create_producer(Queue(queue))  # known to the broker, never sent to
    empty = _read(jms_spark, broker_url, queue)
    assert empty.schema.simpleString() == MESSAGE_SCHEMA.simpleString()
    assert empty.collect() == []
    _produce(session, queue, 3)
    assert _read(jms_spark, broker_url, queue, startingOffsets="latest").count() == 0
    assert _read(jms_spark, broker_url, queue).count() == 3


def test_a_batch_write_publishes_rows_and_routes_by_a_destination_column(
    jms_spark: SparkSession, broker_url: str, session: Session
) -> None:
    queue = _queue()
    sent = _produce(session, queue, 30)
    frame = _read(jms_spark, broker_url, queue)
    routed = frame.withColumn(
        "destination",
        F.when(selector_to_column("region = 'eu'"), F.lit(f"queue://{queue}.eu")).otherwise(
            F.lit(f"queue://{queue}.rest")
        ),
    )
    routed.write.format("jms").mode("append").option("url", broker_url).save()
    eu = list(session.create_browser(Queue(f"{queue}.eu")))
    rest = list(session.create_browser(Queue(f"{queue}.rest")))
    assert sorted(m.get_long_property("n") for m in eu) == list(range(0, 30, 3))
    assert len(rest) == 20
    by_number = {m.get_long_property("n"): m for m in sent}
    for copy in eu + rest:
        original = by_number[copy.get_long_property("n")]
        assert message_fingerprint(copy)[-2:] == message_fingerprint(original)[-2:]
        assert copy.get_jms_priority() == original.get_jms_priority()
    simple = jms_spark.createDataFrame(
        [("hello", 7, "eu"), ("world", None, None)], "text string, qty int, region string"
    )
    simple.write.format("jms").mode("append").option("url", broker_url).option(
        "destination", f"queue://{queue}.simple"
    ).save()
    texts = sorted(
        (m.get_text(), m.get_object_property("qty"), m.get_object_property("region"))  # type: ignore[attr-defined]
        for m in session.create_browser(Queue(f"{queue}.simple"))
    )
    assert texts == [("hello", 7, "eu"), ("world", None, None)]


def test_message_schema_rows_may_leave_out_the_columns_they_never_use(
    jms_spark: SparkSession, broker_url: str, session: Session
) -> None:
    queue = _queue()
    sent = _produce(session, queue, 12)
    unused = ["correlation_id_bytes", "reply_to", "map", "stream", "object"]
    _read(jms_spark, broker_url, queue).drop(*unused).write.format("jms").mode("append").option(
        "url", broker_url
    ).option("destination", f"queue://{queue}.copy").save()
    copies = list(session.create_browser(Queue(f"{queue}.copy")))
    by_number = {m.get_long_property("n"): m for m in sent}
    assert sorted(m.get_long_property("n") for m in copies) == sorted(by_number)
    for copy in copies:
        original = by_number[copy.get_long_property("n")]
        assert message_fingerprint(copy)[-2:] == message_fingerprint(original)[-2:]
        assert copy.get_jms_type() == original.get_jms_type()


def _varied(session: Session, queue: str, count: int) -> list[Message]:
    """Messages unlike the bench's, each kind on a fast path of its own both ways: MapMessages
    (chars and floats among their values), texts beyond ASCII, message groups, an optional
    property (a batch of these is encoded shape by shape), StreamMessages, ObjectMessages,
    plain messages with a float property, requests with a reply-to (a temporary queue or
    not)."""
    producer = session.create_producer(Queue(queue))
    replies = session.create_temporary_queue()
    sent = []
    for number in range(count):
        message: Message
        kind = number % 8
        if kind == 0:
            message = session.create_map_message()
            message.set_string("symbol", ("ACME", "Größe", "東京")[number % 3])  # type: ignore[attr-defined]
            message.set_double("price", number / 8)  # type: ignore[attr-defined]
            message.set_bytes("raw", bytes([number % 256, 0xFF]))  # type: ignore[attr-defined]
            message.set_char("currency", "€")  # type: ignore[attr-defined]
            message.set_float("ratio", number / 3)  # type: ignore[attr-defined]
        elif kind == 1:
            message = session.create_text_message(f"Grüße {number}, 東京")
        elif kind == 2:
            message = session.create_text_message(f"group {number}")
            message.set_string_property("JMSXGroupID", f"g{number % 5}")
            message.set_int_property("JMSXGroupSeq", number + 1)
        elif kind == 3:
            message = session.create_text_message(f"plain {number}")
            if number % 16 == 3:
                message.set_string_property("optional", "here")
        elif kind == 4:
            message = session.create_stream_message()
            for value in (f"sensor-{number % 7}", Float(number / 7), Char("°"), b"\x01", None):
                message.write_object(value)  # type: ignore[attr-defined]
        elif kind == 5:
            message = session.create_object_message({"order": number} if number % 16 else None)
        elif kind == 6:
            message = session.create_message()
            message.set_float_property("threshold", number / 9)
        else:
            message = session.create_text_message(f"request {number}")
            message.set_jms_reply_to(replies if number % 16 == 7 else Queue("replies"))
        message.set_long_property("n", Long(number))
        producer.send(message)
        sent.append(message)
    return sent


def test_messages_of_every_common_kind_cross_spark_both_ways(
    jms_spark: SparkSession, broker_url: str, session: Session
) -> None:
    """Messages of every body kind and of the shapes the bench's are not (``_varied``), read in
    pages and written back, arrive as they were sent (their IDs and timestamps new)."""
    queue = _queue()
    sent = _varied(session, queue, 640)
    _read(jms_spark, broker_url, queue, minPartitions="2").write.format("jms").mode(
        "append"
    ).option("url", broker_url).option("destination", f"queue://{queue}.copy").save()
    copies = list(session.create_browser(Queue(f"{queue}.copy")))
    by_number = {m.get_long_property("n"): m for m in sent}
    assert sorted(m.get_long_property("n") for m in copies) == sorted(by_number)
    for copy in copies:
        original = by_number[copy.get_long_property("n")]
        assert type(copy) is type(original)
        assert message_fingerprint(copy)[-2:] == message_fingerprint(original)[-2:]
        assert copy.get_jms_reply_to() == original.get_jms_reply_to()


def _stream(
    spark: SparkSession, url: str, queue: str, output: Path, checkpoint: Path, **options: str
) -> Any:
    reader = (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", f"queue://{queue}")
        .option("startingOffsets", "earliest")
    )
    for name, value in options.items():
        reader = reader.option(name, value)
    return (
        reader.load()
        .writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(checkpoint))
    )


def _archived(spark: SparkSession, output: Path) -> Counter[str]:
    return Counter(row.message_id for row in spark.read.parquet(str(output)).collect())


def _committed_batches(checkpoint: Path) -> int:
    commits = checkpoint / "commits"
    return len([p for p in commits.iterdir() if p.name.isdigit()]) if commits.exists() else 0


def _wait_for(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


def test_a_stream_stopped_and_restarted_archives_each_message_exactly_once(
    jms_spark: SparkSession, broker_url: str, session: Session, tmp_path: Path
) -> None:
    queue = _queue()
    sent = _produce(session, queue, 150)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    query = (
        _stream(jms_spark, broker_url, queue, output, checkpoint, maxOffsetsPerTrigger="30")
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    try:
        _wait_for(lambda: _committed_batches(checkpoint) >= 2, 90, "two committed batches")
    finally:
        query.stop()
    sent += _produce(session, queue, 50, start=150)
    finish = _stream(jms_spark, broker_url, queue, output, checkpoint, maxOffsetsPerTrigger="30")
    finish.trigger(availableNow=True).start().awaitTermination(120)
    archived = _archived(jms_spark, output)
    assert archived == Counter(m.get_jms_message_id() for m in sent)
    assert _depth(session, queue) == 0  # the run ended normally: all it wrote is consumed


def test_a_killed_driver_process_restarts_from_its_checkpoint_without_loss_or_duplicates(
    jms_spark: SparkSession, broker_url: str, session: Session, tmp_path: Path
) -> None:
    queue = _queue()
    sent = _produce(session, queue, 200)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.spark.stream_child",
            broker_url,
            queue,
            str(output),
            str(checkpoint),
            "--per-trigger",
            "20",
        ],
        cwd=_ROOT,
        env={**os.environ, "PYTHONPATH": str(_ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its JVM and Python workers share its process group
    )
    try:
        _wait_for(lambda: _committed_batches(checkpoint) >= 3, 120, "three committed batches")
        time.sleep(0.3)  # somewhere inside a later batch
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(30)
    assert _committed_batches(checkpoint) < 10, "the child finished before it was killed"
    finish = _stream(jms_spark, broker_url, queue, output, checkpoint, maxOffsetsPerTrigger="20")
    finish.trigger(availableNow=True).start().awaitTermination(120)
    archived = _archived(jms_spark, output)
    assert archived == Counter(m.get_jms_message_id() for m in sent)
    assert max(archived.values()) == 1


def test_a_stream_through_the_jms_sink_publishes_each_batch_once(
    jms_spark: SparkSession, broker_url: str, session: Session, tmp_path: Path
) -> None:
    queue = _queue()
    sent = _produce(session, queue, 60)
    checkpoint = tmp_path / "checkpoint"
    for _ in range(2):  # the second run finds nothing new: nothing is published again
        (
            jms_spark.readStream.format("jms")
            .option("url", broker_url)
            .option("destination", f"queue://{queue}")
            .option("startingOffsets", "earliest")
            .option("selector", "region = 'eu'")
            .option("maxOffsetsPerTrigger", "25")
            .load()
            .writeStream.format("jms")
            .option("url", broker_url)
            .option("destination", f"queue://{queue}.eu")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
            .awaitTermination(120)
        )
    copies = [m.get_long_property("n") for m in session.create_browser(Queue(f"{queue}.eu"))]
    assert copies == [m.get_long_property("n") for m in sent if m.get_long_property("n") % 3 == 0]


def test_the_driver_says_when_spark_hands_the_sink_null_list_columns_the_slow_way(
    broker_url: str, session: Session
) -> None:
    queue = _queue()
    _produce(session, queue, 2500)
    result = subprocess.run(
        [sys.executable, "-m", "tests.spark.hand_over_child", broker_url, queue],
        cwd=_ROOT,
        env={**os.environ, "PYTHONPATH": str(_ROOT)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    advice = [line for line in result.stderr.splitlines() if line.startswith("jms sink to ")]
    # Spark's default settings, the rows as read: one warning, from the commit of that write.
    assert len(advice) == 1, result.stderr[-3000:]
    assert advice[0].startswith(f"jms sink to queue://{queue}.default: ")
    assert "Arrow batches of up to 2,500 rows" in advice[0]
    assert "the column(s) map, stream null in every row" in advice[0]
    assert "leave out map, stream (df.drop('map', 'stream'))" in advice[0]
    assert "jms.spark.pipeline.ARROW_SETTINGS" in advice[0]
    for copy in ("default", "trimmed", "settings"):  # the advice is all that differs
        assert _depth(session, f"{queue}.{copy}") == 2500


@pytest.mark.parametrize("workers", ["interpreter", "jms-spark-python"])
def test_source_and_sink_work_on_a_local_cluster(
    jms_spark: SparkSession, broker_url: str, session: Session, tmp_path: Path, workers: str
) -> None:
    # jms-spark-python: each executor JVM's Python processes are forks of a server of its own.
    python = sys.executable if workers == "interpreter" else worker_python()
    queue = _queue()
    sent = _produce(session, queue, 80)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.spark.cluster_child",
            broker_url,
            queue,
            str(output),
            str(checkpoint),
        ],
        cwd=_ROOT,
        env={**os.environ, "PYTHONPATH": str(_ROOT), "PYSPARK_PYTHON": python},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["executors"] == 2
    assert report["partitions"] == 4
    assert report["ids"] == sorted(m.get_jms_message_id() for m in sent)
    copies = list(session.create_browser(Queue(f"{queue}.copy")))
    assert sorted(m.get_long_property("n") for m in copies) == list(range(80))
    assert _archived(jms_spark, output) == Counter(m.get_jms_message_id() for m in sent)
    assert _depth(session, queue) == 0  # the stream took the backlog and left none of it behind
    forked = [
        any(served_jvm(line.split(" ")) is not None for line in ancestry)
        for ancestry in report["worker_ancestries"]
    ]
    assert forked == [workers == "jms-spark-python"] * 2, report["worker_ancestries"]
    _until_every_fork_server_has_its_jvm()


def _fork_servers() -> dict[int, int]:
    """Every jms-spark-python fork server running: its pid -> the pid of the JVM it serves."""
    servers = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (jvm := fork_server_jvm(int(entry.name))) is not None:
            servers[int(entry.name)] = jvm
    return servers


def _until_every_fork_server_has_its_jvm() -> None:
    """A server ends with its JVM: within a bound, none serves a JVM that has ended."""
    deadline = time.monotonic() + 30
    while orphans := [
        server for server, jvm in _fork_servers().items() if not Path(f"/proc/{jvm}").exists()
    ]:
        assert time.monotonic() < deadline, f"fork servers outlived their JVMs: {orphans}"
        time.sleep(0.1)


def test_a_batch_read_and_write_over_stomp_ssl(jms_spark: SparkSession, tmp_path: Path) -> None:
    certificates = make_certificates(tmp_path)
    broker = Broker()
    tls = ServerTls(certificates.server_cert, certificates.server_key).context()
    try:
        with ServerThread(broker, port=None, tls_port=0, ssl_context=tls) as served:
            assert served.server is not None
            url = f"stomp+ssl://localhost:{served.server.tls_port}"
            trusted = client_ssl_context(certificates.ca)
            with ConnectionFactory(url, ssl_context=trusted).create_connection() as connection:
                _produce(connection.create_session(), "tls.in", 7)
            frame = _read(jms_spark, url, "tls.in", ca=str(certificates.ca))
            assert frame.count() == 7
            frame.select("text").write.format("jms").mode("append").option("url", url).option(
                "ca", str(certificates.ca)
            ).option("destination", "queue://tls.out").save()
            with ConnectionFactory(url, ssl_context=trusted).create_connection() as connection:
                browsed = connection.create_session().create_browser(Queue("tls.out"))
                assert len(list(browsed)) == 7
    finally:
        broker.close()
