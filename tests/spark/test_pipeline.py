"""``jms pipeline`` and ``run_pipeline``, and the two pipelines in ``examples/``, run as real Spark
jobs in the shared session against a broker served over STOMP (batch copies consume nothing;
streams consume each message once, across runs)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

import jms.spark
from jms.broker import Broker
from jms.cli import app
from jms.client import ConnectionFactory, Session
from jms.message import Message, Queue, Topic
from jms.spark.pipeline import (
    ARROW_BATCH_ROWS,
    ARROW_SETTINGS,
    SESSION_SETTINGS,
    Pipeline,
    Progress,
    StreamTally,
    check_broker,
    run_pipeline,
)
from jms.stomp.service import ServerThread
from jms.stomp.tls import ServerTls
from jms.types import Long
from tests.certificates import make_certificates
from tests.spark.served_broker import ServedStore

_EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def broker_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ServedStore(tmp_path_factory.mktemp("pipeline-broker")) as served:
        yield served.url


@pytest.fixture(scope="module")
def jms_spark(spark: SparkSession) -> SparkSession:
    jms.spark.register(spark)
    return spark


@pytest.fixture
def session(broker_url: str) -> Iterator[Session]:
    with ConnectionFactory(broker_url).create_connection() as connection:
        yield connection.create_session()


def _produce(session: Session, queue: str, count: int, start: int = 0) -> list[Message]:
    producer = session.create_producer(Queue(queue))
    sent = []
    for number in range(start, start + count):
        message = session.create_text_message(f"order {number}")
        message.set_long_property("n", Long(number))
        message.set_string_property("region", ("eu", "us", "apac")[number % 3])
        producer.send(message, priority=9 if number % 5 == 0 else 4)
        sent.append(message)
    return sent


def _numbers(session: Session, queue: str) -> list[int]:
    return [m.get_long_property("n") for m in session.create_browser(Queue(queue))]


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, _EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"source": "orders"}, "--from 'orders' is not a destination"),
        ({"source": "topic://t"}, "name the durable subscription to read with --subscription"),
        ({"target": "queue://src"}, "is the source itself"),
        ({"target": "parquet:"}, "names no directory"),
        ({"target": "kafka://x"}, "--to 'kafka://x' is not a destination"),
        ({"selector": "a ="}, "--selector 'a ='"),
        ({"stream": True}, "--stream needs --checkpoint DIR"),
        ({"checkpoint": "/tmp/c"}, "are for --stream pipelines"),
        ({"max_offsets_per_trigger": 5}, "--max-per-trigger is for --stream"),
        (
            {"subscription_name": "s"},
            "--subscription 's' names a durable subscription of a topic, but --from "
            "queue://src is a queue",
        ),
        ({"client_id": "c"}, "--client-id 'c' names a durable subscription of a topic"),
    ],
)
def test_a_pipeline_that_cannot_run_says_why(changes: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {
        "source": "queue://src",
        "target": "parquet:/tmp/out",
        "url": "stomp://127.0.0.1:1",
        **changes,
    }
    with pytest.raises(ValueError, match=message):
        Pipeline(**arguments)  # type: ignore[arg-type]


def _report(batch_id: int, rows: int, ran: bool) -> dict[str, object]:
    """A streaming progress report as Spark makes it: an idle trigger's has no addBatch."""
    durations = {"latestOffset": 1, "triggerExecution": 2}
    if ran:
        durations["addBatch"] = 3
    return {
        "batchId": batch_id,
        "numInputRows": rows,
        "processedRowsPerSecond": rows * 10.0,
        "durationMs": durations,
    }


def test_the_stream_tally_counts_each_batch_once_from_its_last_report() -> None:
    reports = [
        _report(0, 0, ran=False),  # idle before batch 0: the same id as the batch itself
        _report(0, 10, ran=True),
        _report(1, 9, ran=True),
        _report(2, 0, ran=False),  # idle after the last batch: a batch that never ran
    ]
    tally = StreamTally()
    for seen in range(1, len(reports) + 1):  # recentProgress, whole, on every poll
        for report in reports[:seen]:
            tally.add(report)
    assert (tally.messages, tally.batches, tally.rate) == (19, 2, 90.0)


def test_the_cli_refuses_a_bad_pipeline_before_starting_spark() -> None:
    result = CliRunner().invoke(
        app, ["pipeline", "--from", "queue://a", "--to", "queue://b", "--stream"]
    )
    assert result.exit_code == 1
    assert "--stream needs --checkpoint DIR" in result.output


def test_the_broker_check_names_a_durable_subscription_a_batch_pipeline_cannot_find(
    broker_url: str, session: Session
) -> None:
    """Found in review (28 November): Spark started, then failed in 167 lines."""
    topic = f"topic://ticks-{uuid.uuid4().hex[:8]}"
    batch = Pipeline(source=topic, target="parquet:/tmp/x", url=broker_url, subscription_name="s")
    with pytest.raises(ValueError) as refused:
        check_broker(batch)
    assert str(refused.value) == (
        f"--from {topic} has no durable subscription named 's' without a client ID; check "
        "--subscription and --client-id (a --stream pipeline creates it)"
    )
    with pytest.raises(ValueError, match="named 's' for --client-id 'c'; check"):
        check_broker(
            Pipeline(
                source=topic,
                target="parquet:/tmp/x",
                url=broker_url,
                subscription_name="s",
                client_id="c",
            )
        )
    stream = Pipeline(
        source=topic,
        target="parquet:/tmp/x",
        url=broker_url,
        subscription_name="s",
        stream=True,
        checkpoint="/tmp/c",
    )
    check_broker(stream)  # a stream creates it
    session.create_shared_durable_consumer(Topic(topic[len("topic://") :]), "s").close()
    check_broker(batch)


def test_the_broker_check_connects_over_tls_with_the_pipelines_ca(tmp_path: Path) -> None:
    certificates = make_certificates(tmp_path)
    broker = Broker()
    tls = ServerTls(certificates.server_cert, certificates.server_key).context()
    try:
        with ServerThread(broker, port=None, tls_port=0, ssl_context=tls) as served:
            assert served.server is not None
            url = f"stomp+ssl://localhost:{served.server.tls_port}"
            pipeline = Pipeline(source="queue://a", target="queue://b", url=url)
            with pytest.raises(ValueError, match="cannot be verified: unable to get local issuer"):
                check_broker(pipeline)
            check_broker(
                Pipeline(source="queue://a", target="queue://b", url=url, ca=str(certificates.ca))
            )
            assert pipeline.broker_options == {"url": url}
    finally:
        broker.close()


@pytest.mark.spark
def test_a_batch_pipeline_copies_the_selected_messages_to_parquet_without_consuming(
    jms_spark: SparkSession, broker_url: str, session: Session, tmp_path: Path
) -> None:
    queue = f"pipe-{uuid.uuid4().hex[:8]}"
    _produce(session, queue, 90)
    seen: list[Progress] = []
    result = run_pipeline(
        jms_spark,
        Pipeline(f"queue://{queue}", f"parquet:{tmp_path / 'eu'}", broker_url, "region = 'eu'"),
        seen.append,
    )
    assert result.messages == 30 and result.batches == 1
    assert seen[-1].messages == 30
    rows = jms_spark.read.parquet(str(tmp_path / "eu")).collect()
    assert sorted(row.properties["n"].long for row in rows) == list(range(0, 90, 3))
    assert len(_numbers(session, queue)) == 90


def _arrow_batch_rows(spark: SparkSession, folder: Path) -> list[int]:
    """The rows of each Arrow batch the session hands a Python writer for 10,000 rows of 1 KiB,
    in one task."""
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class BatchRowsWriter(DataSourceArrowWriter):
        def __init__(self, folder: str) -> None:
            self.folder = folder

        def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
            rows = [str(batch.num_rows) for batch in iterator]
            (Path(self.folder) / uuid.uuid4().hex).write_text(" ".join(rows))
            return WriterCommitMessage()

    class BatchRowsSink(DataSource):
        @classmethod
        def name(cls) -> str:
            return "jms_test_arrow_batch_rows"

        def writer(self, schema: object, overwrite: bool) -> BatchRowsWriter:
            return BatchRowsWriter(self.options["folder"])

    spark.dataSource.register(BatchRowsSink)
    folder.mkdir()
    rows = spark.range(10_000, numPartitions=1).selectExpr("repeat('x', 1024) AS body")
    rows.write.format("jms_test_arrow_batch_rows").mode("append").option(
        "folder", str(folder)
    ).save()
    return [int(count) for file in folder.iterdir() for count in file.read_text().split()]


@pytest.mark.spark
def test_the_pipeline_session_hands_python_writers_arrow_batches_of_its_rows_with_no_byte_limit(
    spark: SparkSession, tmp_path: Path
) -> None:
    for setting in ARROW_SETTINGS:  # the session defaults: 10,000 rows, a byte limit
        assert spark.conf.get(setting, None) is None
    assert _arrow_batch_rows(spark, tmp_path / "default") == [10_000]
    assert ARROW_SETTINGS.items() <= SESSION_SETTINGS.items()
    # Int.MaxValue is Spark's "no byte limit", the one value that spares every row a measurement.
    assert ARROW_SETTINGS["spark.sql.execution.arrow.maxBytesPerBatch"] == str(2**31 - 1)
    for setting, value in ARROW_SETTINGS.items():
        spark.conf.set(setting, value)
    try:
        tuned = _arrow_batch_rows(spark, tmp_path / "tuned")
    finally:
        for setting in ARROW_SETTINGS:
            spark.conf.unset(setting)
    assert tuned == [ARROW_BATCH_ROWS] * (10_000 // ARROW_BATCH_ROWS)


@pytest.mark.spark
def test_jms_pipeline_streams_to_a_queue_once_across_runs(
    jms_spark: SparkSession, broker_url: str, session: Session, tmp_path: Path
) -> None:
    queue = f"pipe-{uuid.uuid4().hex[:8]}"
    _produce(session, queue, 40)
    command = [
        "pipeline",
        "--from",
        f"queue://{queue}",
        "--to",
        f"queue://{queue}.urgent",
        "--selector",
        "JMSPriority > 4",
        "--stream",
        "--until-idle",
        "--checkpoint",
        str(tmp_path / "checkpoint"),
        "--max-per-trigger",
        "15",
        "--url",
        broker_url,
    ]
    first = CliRunner().invoke(app, command)
    assert first.exit_code == 0, first.output
    assert f"8 message(s) to queue://{queue}.urgent in " in first.output
    _produce(session, queue, 10, start=40)
    second = CliRunner().invoke(app, command)
    assert second.exit_code == 0, second.output
    assert f"2 message(s) to queue://{queue}.urgent in " in second.output
    assert _numbers(session, f"{queue}.urgent") == list(range(0, 50, 5))
    assert jms_spark.sparkContext._jsc is not None  # the shared session is still running


@pytest.mark.spark
def test_the_stream_summary_of_jms_pipeline_counts_what_it_wrote(
    jms_spark: SparkSession, broker_url: str, session: Session, tmp_path: Path
) -> None:
    queue = f"pipe-{uuid.uuid4().hex[:8]}"
    _produce(session, queue, 23)
    output = tmp_path / "out"
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from jms.cli import main; sys.argv[0] = 'jms'; main()",
            "pipeline",
            "--from",
            f"queue://{queue}",
            "--to",
            f"parquet:{output}",
            "--stream",
            "--until-idle",
            "--checkpoint",
            str(tmp_path / "checkpoint"),
            "--max-per-trigger",
            "5",
            "--master",
            "local[2]",
            "--url",
            broker_url,
        ],
        # jms pipeline's own choice of Python for Spark's workers: jms-spark-python.
        env={name: value for name, value in os.environ.items() if name != "PYSPARK_PYTHON"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    summary = re.search(r"([\d,]+) message\(s\) to parquet:\S+ in (\d+) batch\(es\)", result.stderr)
    assert summary is not None, result.stderr
    assert jms_spark.read.parquet(str(output)).count() == 23
    assert (int(summary.group(1).replace(",", "")), int(summary.group(2))) == (23, 5)


@pytest.mark.spark
def test_the_archive_example_archives_each_message_once_per_run(
    jms_spark: SparkSession, broker_url: str, session: Session, tmp_path: Path
) -> None:
    archive = _example("archive_queue_to_parquet").archive
    queue = f"archive-{uuid.uuid4().hex[:8]}"
    output, checkpoint = str(tmp_path / "archive"), str(tmp_path / "checkpoint")
    sent = _produce(session, queue, 25)
    assert archive(jms_spark, broker_url, queue, output, checkpoint) == 25
    sent += _produce(session, queue, 5, start=25)
    assert archive(jms_spark, broker_url, queue, output, checkpoint) == 5
    archived = Counter(row.message_id for row in jms_spark.read.parquet(output).collect())
    assert archived == Counter(m.get_jms_message_id() for m in sent)


@pytest.mark.spark
def test_the_router_example_routes_each_message_to_its_first_matching_route(
    jms_spark: SparkSession, broker_url: str, session: Session, tmp_path: Path
) -> None:
    route = _example("route_by_selector").route
    queue = f"router-{uuid.uuid4().hex[:8]}"
    _produce(session, queue, 30)
    routes = [
        (f"queue://{queue}.urgent", "JMSPriority >= 7"),
        (f"queue://{queue}.eu", "region = 'eu'"),
    ]
    checkpoint = str(tmp_path / "checkpoint")
    assert route(jms_spark, broker_url, f"queue://{queue}", routes, None, checkpoint) == 30
    _produce(session, queue, 6, start=30)
    route(jms_spark, broker_url, f"queue://{queue}", routes, f"queue://{queue}.other", checkpoint)
    assert _numbers(session, f"{queue}.urgent") == list(range(0, 36, 5))
    assert _numbers(session, f"{queue}.eu") == [n for n in range(36) if n % 3 == 0 and n % 5]
    assert _numbers(session, f"{queue}.other") == [31, 32, 34]
    # Each run ended normally: everything it routed was consumed from the source.
    assert _numbers(session, queue) == []
