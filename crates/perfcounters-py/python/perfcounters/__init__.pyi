import datetime
import os
from typing import Dict, Optional, Sequence, Union

import pyarrow

__all__ = ["read_log", "Query", "list_counters", "LogError", "DecodeError", "LogWarning"]

PathLike = Union[str, "os.PathLike[str]"]

class LogError(ValueError):
    """A log cannot be read: its content is not what its format allows."""

    source: str
    location: Optional[str]

class DecodeError(LogError):
    """The bytes of a binary log (.blg) are malformed."""

    structure: str
    offset: int

class LogWarning(UserWarning):
    """What reading a log stepped over, or a counter path that selects nothing while others do."""

def read_log(
    path_or_paths: Union[PathLike, Sequence[PathLike]],
    *,
    counters: Optional[Sequence[str]] = None,
    names: Union[PathLike, Sequence[PathLike], None] = None,
    begin: Optional[datetime.datetime] = None,
    end: Optional[datetime.datetime] = None,
    tidy: bool = False,
    code_page: Optional[int] = None,
) -> pyarrow.Table:
    """Reads one or more logs (.blg, PDH-CSV/TSV, SQL, Parquet) into a pyarrow.Table."""

class Query:
    """Counter paths collected together from the local machine."""

    def __init__(self, paths: Union[str, Sequence[str]]) -> None: ...
    def collect(self) -> Dict[str, Optional[float]]:
        """Collects once: {path: value}, None where the counter has no value."""
    def statuses(self) -> Dict[str, str]:
        """The PDH status of each counter at the last collection."""
    def table(self, samples: int, interval: float = 1.0) -> pyarrow.Table:
        """Collects a series into a wide table."""

def list_counters(object: Optional[str] = None) -> pyarrow.Table:
    """The counters of the local machine as a table."""

