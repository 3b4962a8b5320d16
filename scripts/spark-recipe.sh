#!/usr/bin/env bash
# The Spark recipe of docs/columnar.md, run with a real pyspark in local mode
# (crates/perfcounters-py/tests/test_spark_recipe.py): too heavy for .ci/run (a JVM, a local
# Spark), so run by hand. Needs Java 17 and a Python with pyspark, pyarrow, duckdb, pytest and the
# package installed (`pip install pyspark duckdb pytest ./crates/perfcounters-py`), and the
# `perfcounters` binary (PERFCOUNTERS_CLI, else target/debug or target/release).
#
#   scripts/spark-recipe.sh [PYTHON [PYTEST ARGS…]]    # the recipe on the shared logs
#   PERFCOUNTERS_SPARK_LOGS=DIR scripts/spark-recipe.sh PYTHON -k throughput
#                                                      # Spark's and relog's throughput on DIR's logs
#
# docs/columnar.md ("Spark") records its runs.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3}
shift || true
"$python" -c 'import pyspark, duckdb, perfcounters; print("pyspark", pyspark.__version__, "duckdb", duckdb.__version__)'
java -version 2>&1 | head -n 1
PERFCOUNTERS_SPARK_RECIPE=1 "$python" -m pytest -q -s -p no:cacheprovider \
    crates/perfcounters-py/tests/test_spark_recipe.py "$@"
