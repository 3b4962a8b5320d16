"""The extension module that ``perfcounters`` wraps: its classes and functions as the package calls them.

The package's own API (``read_log``, ``analyze``, ``compare``, ``Query``, ``list_counters``, the
``spark`` module) is annotated in
``__init__.py``; a type checker reads those annotations there and this file for what crosses into
the extension.
"""

from typing import Any, Dict, List, Optional, Tuple, Union

#: A log as the package hands it over: a path, or a name and the bytes of a log in memory.
_Input = Union[str, Tuple[str, Union[bytes, bytearray]]]

__version__: str

class LogError(ValueError):
    """A log cannot be read: its content is not what its format allows."""

    source: str
    location: Optional[str]

class DecodeError(LogError):
    """The bytes of a binary log (.blg) are malformed."""

    structure: str
    offset: int

class ArrowStream:
    """Record batches exported once through the Arrow C stream interface."""

    @property
    def warnings(self) -> List[str]:
        """What reading stepped over, and the counter paths that selected nothing while others did."""
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

def read_log(
    inputs: List[_Input],
    counters: Optional[List[str]] = None,
    names: List[str] = ...,
    begin: Optional[Tuple[int, bool]] = None,
    end: Optional[Tuple[int, bool]] = None,
    tidy: bool = False,
    code_page: Optional[int] = None,
) -> ArrowStream: ...

def compare(
    baseline: List[_Input],
    candidate: List[_Input],
    counters: Optional[List[str]] = None,
    names: List[str] = ...,
    begin: Optional[Tuple[int, bool]] = None,
    end: Optional[Tuple[int, bool]] = None,
    code_page: Optional[int] = None,
    rules: List[str] = ...,
) -> ArrowStream: ...

def analyze(
    inputs: List[_Input],
    rules: List[str] = ...,
    interval: Optional[int] = None,
    set: List[Tuple[str, str]] = ...,
    counters: Optional[List[str]] = None,
    names: List[str] = ...,
    begin: Optional[Tuple[int, bool]] = None,
    end: Optional[Tuple[int, bool]] = None,
    code_page: Optional[int] = None,
) -> ArrowStream: ...

def long_form_partitions(
    inputs: List[_Input],
    code_page: Optional[int] = None,
) -> Tuple[List[Tuple[Optional[str], str, ArrowStream]], List[str]]: ...

class Query:
    def __init__(self, paths: List[str]) -> None: ...
    def collect(self) -> Dict[str, Optional[float]]: ...
    def statuses(self) -> Dict[str, str]: ...
    def table(self, samples: int, interval: float) -> ArrowStream: ...

def list_counters(object: Optional[str] = None) -> ArrowStream: ...
