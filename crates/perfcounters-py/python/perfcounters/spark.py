"""Performance Monitor logs converted and analysed inside Spark, through ``mapInArrow``.

Spark's ``binaryFile`` source reads a directory of logs into rows of ``path``, ``modificationTime``,
``length`` and ``content``; the functions here take such rows as Arrow record batches and give
record batches back, one log at a time, so that a cluster converts or analyses ten thousand logs in
parallel::

    from perfcounters import spark as pcs

    logs = spark.read.format("binaryFile").load("s3://bucket/perflogs/")
    long = logs.mapInArrow(pcs.to_long_form, pcs.LONG_FORM_SCHEMA)
    alerts = logs.mapInArrow(pcs.analyze, pcs.ALERTS_SCHEMA)

The module imports no Spark: it works on ``pyarrow`` batches (any iterable of them with the columns
``path`` and ``content``), so it runs and is tested without a cluster. docs/columnar.md has the whole
recipe (partitioned Parquet that DuckDB reads, error rows, strict mode).

**A file that cannot be read** does not fail the job: it gives an *error row*, ``path`` and
``error`` set (the message names the file and the place), every other column null. A file read
with something stepped over (a ``.blg`` damaged part-way, read up to its damage; a code page
detected) gives its rows and, besides them, one error row per warning. ``strict=True`` raises
instead (``perfcounters.LogError``, or ``OSError``), failing the task and so the job, as Spark
does with any exception of a Python function.
"""

from __future__ import annotations

import datetime as _dt
from typing import Callable, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import LogError, PathLike, _paths
from . import _perfcounters as _ext

__all__ = [
    "to_long_form",
    "analyze",
    "LONG_FORM_SCHEMA",
    "LONG_FORM_ARROW_SCHEMA",
    "ALERTS_SCHEMA",
    "ALERTS_ARROW_SCHEMA",
]

_UTC = pa.timestamp("us", tz="UTC")

#: The Arrow schema of ``to_long_form``'s batches: the long form of docs/columnar.md in the types
#: Spark has (strings, no dictionaries; the unsigned 32-bit columns as 64-bit integers), then the
#: partition column ``date`` (the UTC date of ``time``), the ``path`` of the file each row comes from
#: and ``error`` (null, except on error rows).
LONG_FORM_ARROW_SCHEMA = pa.schema(
    [
        ("time", _UTC),
        ("machine", pa.string()),
        ("object", pa.string()),
        ("instance", pa.string()),
        ("counter", pa.string()),
        ("value", pa.float64()),
        ("parent", pa.string()),
        ("instance_index", pa.int64()),
        ("counter_type", pa.int64()),
        ("raw_first", pa.int64()),
        ("raw_second", pa.int64()),
        ("multi_count", pa.int64()),
        ("status", pa.int64()),
        ("date", pa.date32()),
        ("path", pa.string()),
        ("error", pa.string()),
    ]
)

#: The Arrow schema of ``analyze``'s batches: the alerts of each log, with its ``path`` first and
#: ``error`` last (null, except on error rows).
ALERTS_ARROW_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("machine", pa.string()),
        ("analysis", pa.string()),
        ("condition", pa.string()),
        ("priority", pa.int32()),
        ("counter", pa.string()),
        ("start", _UTC),
        ("end", _UTC),
        ("min", pa.float64()),
        ("avg", pa.float64()),
        ("max", pa.float64()),
        ("error", pa.string()),
    ]
)

_SPARK_TYPES = {
    pa.string(): "STRING",
    pa.float64(): "DOUBLE",
    pa.int64(): "BIGINT",
    pa.int32(): "INT",
    pa.date32(): "DATE",
    _UTC: "TIMESTAMP",
}


def _ddl(schema: pa.Schema) -> str:
    """A Spark DDL string of ``schema`` (names quoted: ``end`` and ``date`` are SQL keywords)."""
    return ", ".join(f"`{f.name}` {_SPARK_TYPES[f.type]}" for f in schema)


#: ``LONG_FORM_ARROW_SCHEMA`` as the DDL string ``mapInArrow`` takes.
LONG_FORM_SCHEMA: str = _ddl(LONG_FORM_ARROW_SCHEMA)

#: ``ALERTS_ARROW_SCHEMA`` as the DDL string ``mapInArrow`` takes.
ALERTS_SCHEMA: str = _ddl(ALERTS_ARROW_SCHEMA)

#: A log as the rows carry it: its path and its content.
_Row = Tuple[str, bytes]


def _rows(batches: Iterable[pa.RecordBatch]) -> Iterator[_Row]:
    """The ``(path, content)`` of every row of ``batches``, one row's content at a time."""
    for batch in batches:
        paths = batch.column(batch.schema.get_field_index("path"))
        contents = batch.column(batch.schema.get_field_index("content"))
        for i in range(batch.num_rows):
            path = paths[i].as_py()
            content = contents[i].as_py()
            if path is None or content is None:
                raise ValueError(f"row {i} of a batch has no path or no content: {path!r}")
            yield str(path), content


def _error_batch(schema: pa.Schema, path: str, messages: Sequence[str]) -> pa.RecordBatch:
    """Error rows: ``path`` and ``error`` set, every other column null."""
    n = len(messages)
    arrays = []
    for field in schema:
        if field.name == "path":
            arrays.append(pa.array([path] * n, pa.string()))
        elif field.name == "error":
            arrays.append(pa.array(list(messages), pa.string()))
        else:
            arrays.append(pa.nulls(n, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _column(table: pa.Table, name: str, type: pa.DataType) -> pa.Array:
    """Column ``name`` of ``table`` in ``type`` (a dictionary decoded, an integer widened), or nulls
    when the table has none (a text log has no raw columns)."""
    if name not in table.column_names:
        return pa.nulls(table.num_rows, type)
    return table.column(name).combine_chunks().cast(type)


def _log_batches(
    schema: pa.Schema,
    path: str,
    strict: bool,
    read: Callable[[], Tuple[Iterable[Tuple[pa.Table, Mapping[str, object]]], Sequence[str]]],
) -> Iterator[pa.RecordBatch]:
    """One log's batches in ``schema``. ``read()`` gives the log's tables, each with the values of
    the columns that are one value for all its rows (``path``, a partition's ``date``), and the
    log's warnings. What ``read`` raises, and each warning, becomes an error row (the module
    documentation), or is raised with ``strict``."""
    try:
        tables, warnings = read()
    except (ValueError, OSError) as e:
        if strict:
            raise
        yield _error_batch(schema, path, [str(e)])
        return
    if strict and warnings:
        raise LogError("\n".join(warnings))
    for table, constants in tables:
        n = table.num_rows
        arrays = []
        for field in schema:
            if field.name in constants:
                arrays.append(pa.repeat(pa.scalar(constants[field.name], field.type), n))
            elif field.name == "error":
                arrays.append(pa.nulls(n, pa.string()))
            else:
                arrays.append(_column(table, field.name, field.type))
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)
    if warnings:
        yield _error_batch(schema, path, warnings)


def _long_form_of(path: str, content: bytes, strict: bool, code_page: Optional[int]) -> Iterator[pa.RecordBatch]:
    def read():
        parts, warnings = _ext.long_form_partitions([(path, content)], code_page=code_page)
        tables = (
            (pa.table(stream), {"path": path, "date": _dt.date.fromisoformat(date)})
            for _machine, date, stream in parts
        )
        return tables, warnings

    return _log_batches(LONG_FORM_ARROW_SCHEMA, path, strict, read)


def to_long_form(
    batches: Iterable[pa.RecordBatch],
    *,
    strict: bool = False,
    code_page: Optional[int] = None,
) -> Iterator[pa.RecordBatch]:
    """The long form of every log of ``batches`` (rows of ``path`` and ``content``, as Spark's
    ``binaryFile`` source gives them), for ``DataFrame.mapInArrow(to_long_form, LONG_FORM_SCHEMA)``.

    Each log is read from its bytes as ``perfcounters.read_log`` reads a file (``.blg``, PDH-CSV/TSV
    or Parquet, the format told from the content, raw samples computed as relog computes them) and
    split as ``perfcounters relog LOG -o DIR/`` splits a dataset: by the machine of its columns and
    the UTC date of its records, in a log of several machines a record where a machine has only
    blank cells left out of that machine's rows. So ``partitionBy("machine", "date")`` writes the
    rows relog's dataset holds. Columns: ``LONG_FORM_ARROW_SCHEMA`` (the raw columns null for text
    logs). An unreadable file gives an error row (``path``, ``error``; the module documentation);
    ``strict=True`` raises. ``code_page`` is ``read_log``'s.
    """
    for path, content in _rows(batches):
        yield from _long_form_of(path, content, strict, code_page)


def _alerts_of(
    path: str,
    content: bytes,
    rules: List[str],
    interval: Optional[int],
    set: List[Tuple[str, str]],
    strict: bool,
    code_page: Optional[int],
) -> Iterator[pa.RecordBatch]:
    def read():
        stream = _ext.analyze([(path, content)], rules=rules, interval=interval, set=set, code_page=code_page)
        return (((pa.table(stream), {"path": path}) for _ in (0,)), stream.warnings)

    return _log_batches(ALERTS_ARROW_SCHEMA, path, strict, read)


def analyze(
    batches: Iterable[pa.RecordBatch],
    *,
    rules: Union[PathLike, Sequence[PathLike], None] = None,
    interval: Optional[int] = None,
    set: Optional[Mapping[str, str]] = None,
    strict: bool = False,
    code_page: Optional[int] = None,
) -> Iterator[pa.RecordBatch]:
    """The alerts of every log of ``batches`` (rows of ``path`` and ``content``), each log analysed
    on its own as ``perfcounters analyze LOG`` analyses it, for
    ``DataFrame.mapInArrow(analyze, ALERTS_SCHEMA)`` (with other arguments,
    ``functools.partial(analyze, rules=...)``).

    ``rules``, ``interval`` and ``set`` are
    ``perfcounters.analyze``'s; the rules files must be readable where the tasks run (a built-in
    file's name always is). Columns: ``ALERTS_ARROW_SCHEMA``: ``path``, then
    ``perfcounters.analyze``'s ``machine``, ``analysis``, ``condition``, ``priority``, ``counter``,
    ``start``, ``end`` (UTC), ``min``, ``avg``, ``max``, then ``error``. An unreadable file gives
    an error row; ``strict=True`` raises.
    """
    rule_files = [] if rules is None else _paths(rules)
    answers = [] if set is None else [(str(k), str(v)) for k, v in set.items()]
    for path, content in _rows(batches):
        yield from _alerts_of(path, content, rule_files, interval, answers, strict, code_page)
