"""Windows performance counter logs and live counters as Arrow tables.

``read_log`` reads Performance Monitor logs (.blg, PDH-CSV/TSV in any code page, SQL logs, Parquet)
into a ``pyarrow.Table``, computing values as relog does; a log is a path, or its content (``bytes``,
a binary file-like object). ``analyze`` gives the alerts of PAL's thresholds over logs, as
``perfcounters analyze``. The data crosses from Rust through the Arrow C stream interface: no Python
object is made per cell, and the GIL is released while reading. ``perfcounters.spark`` runs the
conversion and the analysis inside Spark (``mapInArrow``).
"""

from __future__ import annotations

import datetime as _dt
import os
import warnings as _warnings
from typing import IO, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import pyarrow as pa

from ._perfcounters import DecodeError, LogError
from . import _perfcounters as _ext

__all__ = [
    "read_log",
    "analyze",
    "compare",
    "Query",
    "list_counters",
    "LogError",
    "DecodeError",
    "LogWarning",
    "__version__",
]

#: The package's version (the Rust crates' version).
__version__: str = _ext.__version__


class LogWarning(UserWarning):
    """What reading a log stepped over without failing (a .blg's unknown records, the damage that
    ends a broken log), or a path of ``counters`` that selects nothing while others do, with the
    log's closest names: the warnings ``perfcounters relog`` prints."""

_EPOCH = _dt.datetime(1970, 1, 1)

PathLike = Union[str, "os.PathLike[str]"]

#: A log: a path (a file, a pattern, ``SQL:file.db!log``, a dataset directory), or its content in
#: memory: ``bytes``, ``bytearray``, ``memoryview``, or a binary file-like object (read whole).
LogSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]

#: What the extension takes for a log: a path, or a name and the bytes.
_Input = Union[str, Tuple[str, Union[bytes, bytearray]]]


def _bound(value: Optional[_dt.datetime], name: str) -> Optional[Tuple[int, bool]]:
    """A time bound as (microseconds since 1970-01-01, aware)."""
    if value is None:
        return None
    if not isinstance(value, _dt.datetime):
        raise TypeError(f"{name} must be a datetime.datetime, not {type(value).__name__}")
    if value.tzinfo is not None and value.utcoffset() is not None:
        utc = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return ((utc - _EPOCH) // _dt.timedelta(microseconds=1), True)
    return ((value.replace(tzinfo=None) - _EPOCH) // _dt.timedelta(microseconds=1), False)


def _paths(path_or_paths: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    if isinstance(path_or_paths, (str, os.PathLike)):
        return [os.fspath(path_or_paths)]
    paths = [os.fspath(p) for p in path_or_paths]
    if not paths:
        raise ValueError("no log to read: the list of paths is empty")
    return paths


def _is_one_log(value: object) -> bool:
    """Whether ``value`` is one log (a path, bytes, a file-like object) rather than a list."""
    return isinstance(value, (str, os.PathLike, bytes, bytearray, memoryview)) or hasattr(value, "read")


def _inputs(logs: Union[LogSource, Sequence[LogSource]]) -> List[_Input]:
    """The logs as the extension takes them: paths as strings, logs in memory as (name, bytes).
    A log in memory is named ``<bytes>`` or by its file-like object's ``name``; names that repeat
    get `` #2``, `` #3`` … so that each names one log."""
    items: List[object]
    if _is_one_log(logs):
        items = [logs]
    else:
        try:
            items = list(logs)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(
                f"a log is a path, bytes or a binary file-like object, not {type(logs).__name__}"
            ) from None
    if not items:
        raise ValueError("no log to read: the list of logs is empty")
    out: List[_Input] = []
    taken: Dict[str, int] = {}

    def unique(name: str) -> str:
        n = taken.get(name, 0) + 1
        taken[name] = n
        return name if n == 1 else f"{name} #{n}"

    for item in items:
        if isinstance(item, (str, os.PathLike)):
            out.append(os.fspath(item))
        elif isinstance(item, (bytes, bytearray)):
            out.append((unique("<bytes>"), item))
        elif isinstance(item, memoryview):
            out.append((unique("<bytes>"), item.tobytes()))
        elif hasattr(item, "read"):
            data = item.read()
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(
                    f"a file-like log must be opened in binary mode: read() gave {type(data).__name__}, not bytes"
                )
            name = getattr(item, "name", None)
            label = os.fspath(name) if isinstance(name, (str, os.PathLike)) else "<file>"
            out.append((unique(str(label)), data))
        else:
            raise TypeError(
                "a log is a path, bytes or a binary file-like object, "
                f"not {type(item).__name__}"
            )
    return out


def read_log(
    path_or_paths: Union[LogSource, Sequence[LogSource]],
    *,
    counters: Optional[Sequence[str]] = None,
    names: Union[PathLike, Sequence[PathLike], None] = None,
    begin: Optional[_dt.datetime] = None,
    end: Optional[_dt.datetime] = None,
    tidy: bool = False,
    code_page: Optional[int] = None,
    strict: bool = False,
) -> pa.Table:
    """Reads one or more logs into a ``pyarrow.Table``.

    ``path_or_paths`` is a path, a file-name pattern (``*`` and ``?``), ``SQL:file.db!log``, a Parquet
    dataset directory, a log's content (``bytes``, ``bytearray``, ``memoryview``, or a binary
    file-like object, read whole), or a list of them; several logs are merged in time order as
    relog merges them. The format is found from the content first, the name second. A log in memory
    (a .blg, PDH-CSV/TSV or Parquet log; a SQL log is read from a file) is read where it is, with
    no temporary file, and named in messages ``<bytes>`` or by its file-like object's ``name``.

    The wide form (default) has a column ``time`` (UTC timestamps) and one float64 column per
    counter, named with the path as the log writes it, null where the cell is blank or the sample
    has no value. Raw samples (.blg, SQL logs) are computed as relog computes them. ``tidy=True``
    gives the long form: one row per cell, with the parts of the counter path and, for logs of raw
    samples, the raw values, counter type and status.

    The schema's metadata (``perfcounters.*``) holds the log's source, kind, time zone and bias,
    its columns with their counter types, and its machines.

    ``counters`` keeps the counters that any of these paths selects (wildcards as relog's ``-c``).
    ``names`` are name table files (``PerfStringBackup.INI`` as ``lodctr /S`` saves it, a REG_MULTI_SZ
    dump, or ``index name`` lines) through which ``counters`` also match the log's names in another
    language, as relog's ``--names``: ``\\Processor(*)\\% Processor Time`` selects
    ``\\Prozessor(*)\\Prozessorzeit (%)`` with a German table.
    ``begin`` and ``end`` keep the records in that range (inclusive); an aware datetime is an instant,
    a naive one is a local time of the log's zone, as relog's ``-b``/``-e`` take it. ``code_page`` is the
    ANSI code page of text logs without a byte-order mark (default: UTF-8 when the header line is,
    else the code page detected from it, named in a ``LogWarning``); 65001 on text that is not UTF-8
    is a ``LogError``. A log whose names are not English is matched through PAL's built-in
    ``CounterLang.xml`` (``names`` adds tables to it).

    Raises ``FileNotFoundError``/``PermissionError`` for a file that is missing or unreadable,
    ``DecodeError`` for a malformed .blg (with ``structure`` and ``offset``), ``LogError`` for other
    unreadable logs, and ``ValueError`` for bad arguments, and when no path of ``counters`` selects
    a counter, with the reason of each and the log's closest names (``\\Procesor(*)\\*: the log has
    no object "Procesor"; did you mean "Processor"?``), as ``perfcounters relog -c`` says it.
    Issues a ``LogWarning`` for each thing stepped over (a damaged .blg is read up to its damage,
    and the warning says where and how many samples were read) and each path that selects nothing
    while others do. With ``strict=True`` what reading stepped over or assumed raises ``LogError``
    instead, with the same messages, one a line: the table is returned only for a log read whole and
    as written.
    """
    stream = _ext.read_log(
        _inputs(path_or_paths),
        counters=None if counters is None else list(counters),
        names=[] if names is None else _paths(names),
        begin=_bound(begin, "begin"),
        end=_bound(end, "end"),
        tidy=tidy,
        code_page=code_page,
    )
    if strict and stream.warnings:
        raise LogError("\n".join(stream.warnings))
    for message in stream.warnings:
        _warnings.warn(message, LogWarning, stacklevel=2)
    return pa.table(stream)


def analyze(
    logs: Union[LogSource, Sequence[LogSource]],
    *,
    rules: Union[PathLike, Sequence[PathLike], None] = None,
    interval: Optional[int] = None,
    set: Optional[Mapping[str, str]] = None,
    counters: Optional[Sequence[str]] = None,
    names: Union[PathLike, Sequence[PathLike], None] = None,
    begin: Optional[_dt.datetime] = None,
    end: Optional[_dt.datetime] = None,
    code_page: Optional[int] = None,
    strict: bool = False,
) -> pa.Table:
    """The alerts of ``perfcounters analyze LOGS --format json``: PAL's thresholds evaluated over the
    logs in time slices, one row per threshold broken in a slice by a counter instance.

    ``logs`` are read as ``read_log`` reads them (paths or contents). The logs of one machine are
    merged and analysed together; logs of several machines are analysed one machine at a time (each
    with its own first record and automatic slice width), as the command's fleet report. ``rules``
    are PAL threshold files, each a path or the name of a built-in file (default: the built-in
    QuickSystemOverview); ``interval`` the slice width in seconds (default: PAL's automatic width);
    ``set`` the answers to the rules' questions (``{"PhysicalMemory": "64"}``; in a fleet,
    ``{"WEB2:PhysicalMemory": "64"}`` answers for one machine). ``counters``, ``names``, ``begin``,
    ``end`` and ``code_page`` are ``read_log``'s.

    Columns: ``machine`` (the machine the counter's path names; else the machine of its logs; null
    when none is known), ``analysis``, ``condition`` (``Warning``, ``Critical``), ``priority``,
    ``counter`` (the path in English, as the report names it), ``start`` and ``end`` (the slice, UTC
    instants; the JSON report shows them in the log's local time), ``min``, ``avg``, ``max`` (the
    slice's values), ``threshold_name``, ``operator`` (``gt``, ``lt`` …; null when the threshold's
    code raised the alert), ``threshold`` and ``trend`` (per hour, for a trend threshold).

    Raises as ``read_log`` does; ``ValueError`` for a question or interval the rules refuse. In a
    fleet, a machine whose logs cannot be analysed is a ``LogWarning`` naming it while the others
    are analysed (an error when none can be). With ``strict=True`` every warning raises
    ``LogError`` instead.
    """
    stream = _ext.analyze(
        _inputs(logs),
        rules=[] if rules is None else _paths(rules),
        interval=interval,
        set=[] if set is None else [(str(k), str(v)) for k, v in set.items()],
        counters=None if counters is None else list(counters),
        names=[] if names is None else _paths(names),
        begin=_bound(begin, "begin"),
        end=_bound(end, "end"),
        code_page=code_page,
    )
    if strict and stream.warnings:
        raise LogError("\n".join(stream.warnings))
    for message in stream.warnings:
        _warnings.warn(message, LogWarning, stacklevel=2)
    return pa.table(stream)


def compare(
    baseline: Union[LogSource, Sequence[LogSource]],
    candidate: Union[LogSource, Sequence[LogSource]],
    *,
    counters: Optional[Sequence[str]] = None,
    names: Union[PathLike, Sequence[PathLike], None] = None,
    begin: Optional[_dt.datetime] = None,
    end: Optional[_dt.datetime] = None,
    code_page: Optional[int] = None,
    rules: Union[PathLike, Sequence[PathLike], None] = None,
) -> pa.Table:
    """What changed between ``baseline`` (logs of a time when all was well) and ``candidate``, as
    ``perfcounters analyze CANDIDATE --baseline BASELINE`` compares them: a ``pyarrow.Table`` with
    one row per counter, ranked (worse first, then better and changed by the size of the effect,
    then new, gone, unchanged).

    Each side is read as ``read_log`` reads its logs (paths or contents) (several logs merged; ``counters``, ``names``,
    ``begin``, ``end`` and ``code_page`` apply to both). Counters match by object, instance and
    counter in English, the machine ignored. Columns: ``counter`` (the English path without the
    machine), ``class`` (``worse``, ``better``, ``changed``, ``new``, ``gone``, ``unchanged``),
    ``effect`` (Cliff's delta of the candidate against the baseline, in [-1, 1]) and
    ``effect_error`` (a bound on its error, 0 when exact), ``avg_ratio`` and ``p95_ratio``
    (candidate over baseline), ``bad`` (``up``/``down``: the direction PAL's thresholds call bad,
    null without one), ``analyses`` (the analyses that read the counter), then
    ``baseline_count``, ``baseline_min``, ``baseline_avg``, ``baseline_p50``, ``baseline_p95``,
    ``baseline_max`` and the same for ``candidate_``. ``rules`` are PAL threshold files, each a path or
    the name of a built-in file as ``perfcounters analyze --list-rules`` lists them
    (``"SQLServer2014"``; default: the built-in QuickSystemOverview). docs/analyze.md gives the semantics and bounds.

    Raises as ``read_log`` does, the message naming the side (``baseline: …``); ``ValueError`` when
    a side has no record in the range or the two share no counter (naming a few counters of each and
    suggesting ``names`` when one side is localized).
    """
    stream = _ext.compare(
        _inputs(baseline),
        _inputs(candidate),
        counters=None if counters is None else list(counters),
        names=[] if names is None else _paths(names),
        begin=_bound(begin, "begin"),
        end=_bound(end, "end"),
        code_page=code_page,
        rules=[] if rules is None else _paths(rules),
    )
    for message in stream.warnings:
        _warnings.warn(message, LogWarning, stacklevel=2)
    return pa.table(stream)


class Query:
    """Counter paths collected together from the local machine (procfs on Linux, the registry and
    PerfLib on Windows), as typeperf collects them.

    ``paths`` are PDH counter paths (``\\Processor(*)\\% Processor Time``), wildcards allowed; they
    expand on the first collection and again, as ``watch`` does, at the second and then every 10 s
    of collections, so that a process that starts gets its instances and one that exits loses them.
    A rate has a value from a counter's second collection on.
    Raises ``ValueError`` for a path that does not parse, ``OSError`` when the machine's counters
    cannot be read.
    """

    def __init__(self, paths: Union[str, Sequence[str]]) -> None:
        self._query = _ext.Query([paths] if isinstance(paths, str) else list(paths))

    def collect(self) -> Dict[str, Optional[float]]:
        """Collects once: ``{path: value}`` for every expanded counter, ``None`` where the counter
        has no value (the first sample of a rate, an instance that went away: see ``statuses``).
        Raises ``ValueError`` when no path can ever have a value (each names an object or a counter
        the machine does not offer), with the close names of each, as ``perfcounters watch`` says
        it."""
        values: Dict[str, Optional[float]] = self._query.collect()
        return values

    def statuses(self) -> Dict[str, str]:
        """The PDH status of each counter at the last collection, by path
        (``PDH_CSTATUS_VALID_DATA``, ``PDH_NO_DATA`` for the first sample of a rate …)."""
        statuses: Dict[str, str] = self._query.statuses()
        return statuses

    def table(self, samples: int, interval: float = 1.0) -> pa.Table:
        """Collects ``samples`` times, ``interval`` seconds apart, into a wide table: ``time`` (UTC)
        and one float64 column per counter of any collection, in the order they first appeared,
        null where a counter was not collected (an instance that started later or exited) or had
        no value. The GIL is released while collecting."""
        return pa.table(self._query.table(samples, interval))

    def __repr__(self) -> str:
        text: str = repr(self._query)
        return text


def list_counters(object: Optional[str] = None) -> pa.Table:
    """The counters of the local machine (of one ``object`` when given): ``object``,
    ``multi_instance``, ``counter``, ``counter_type``, ``counter_type_name``, ``detail_level``,
    ``help``. Raises ``ValueError`` for an object the machine does not have."""
    return pa.table(_ext.list_counters(object))
