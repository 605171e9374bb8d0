"""A Spark application on ``local-cluster[2,1,1024]`` reading a destination straight from its
store (``option("store", URL)``, no broker in the way): every executor opens the database
itself. Prints one JSON line with what it read, in how many partitions, on how many executors.

    python -m tests.spark.store_cluster_child STORE DESTINATION
"""

from __future__ import annotations

import argparse
import json

from pyspark.sql import functions as F

from tests.spark.cluster_child import executor_count, local_cluster


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("destination")
    args = parser.parse_args()
    spark = local_cluster()
    read = (
        spark.read.format("jms")
        .option("store", args.store)
        .option("destination", args.destination)
        .option("minPartitions", "4")
        .load()
        .select("message_id", "text", F.spark_partition_id().alias("partition"))
        .collect()
    )
    report = {
        "ids": sorted(row.message_id for row in read),
        "texts": sorted(row.text for row in read),
        "partitions": len({row.partition for row in read}),
        "executors": executor_count(spark),
    }
    print(json.dumps(report), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
