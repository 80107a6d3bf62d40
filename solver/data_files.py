"""Reading the solver's input files safely: profile, track and scenario files
(docs/SECURITY.md).

``read_text`` opens a file without following it into a hang or an endless
read: it must be a regular file (a FIFO, a device such as /dev/zero, a socket
or a directory is refused before anything is read; the FIFO is opened
non-blocking, so that opening it does not wait for a writer), at most
``max_bytes`` long (checked on the open descriptor, and again while reading,
for a file that grows), UTF-8, with at most ``max_lines`` lines.

``resolve_contained`` turns a relative file name into a path inside one of the
given folders (an FMU's resources, the built-in profiles): ``..`` or a symbolic
link that leads out of the folder is refused. An absolute path is taken as
given: the caller named it on purpose.

Errors are ``DataFileError`` (a ValueError) naming the file and the reason; they
never quote the file's content. The loaders turn them into their own error
types (ProfileError, TrackError, ...).
"""

from __future__ import annotations

import os
import stat
from typing import Iterable, Optional

from .errors import SolverError


MAX_FILE_BYTES = 10 * 1024 * 1024      # 10 MB: the built-in profiles are ~30 kB
MAX_FILE_LINES = 200_000               # the built-in profiles have ~1400 lines


class DataFileError(SolverError):
    """An input file that cannot be read; names the file and the reason (never its content)."""

    def __init__(self, message: str, path: str | os.PathLike | None = None):
        self.path = None if path is None else os.fspath(path)
        self.reason = message
        super().__init__(f"{self.path}: {message}" if self.path is not None else message)


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes`; DataFileError otherwise."""
    path = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise DataFileError("no such file", path) from None
    except IsADirectoryError:
        raise DataFileError("is a directory, not a file", path) from None
    except OSError as exc:
        raise DataFileError(f"cannot be opened ({exc.strerror})", path) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DataFileError(f"is {_kind_of(st.st_mode)}, not a regular file", path)
        if st.st_size > max_bytes:
            raise DataFileError(f"is {st.st_size / 1e6:.1f} MB, larger than the "
                                f"{max_bytes / 1e6:.0f} MB allowed", path)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise DataFileError(f"grew beyond the {max_bytes / 1e6:.0f} MB allowed while "
                                    "being read", path)
        return b"".join(chunks)
    except OSError as exc:
        raise DataFileError(f"cannot be read ({exc.strerror})", path) from None
    finally:
        os.close(fd)


def read_text(path, *, max_bytes: int = MAX_FILE_BYTES, max_lines: int = MAX_FILE_LINES) -> str:
    """The UTF-8 text of a regular file within the size and line caps."""
    data = read_bytes(path, max_bytes=max_bytes)
    if data.count(b"\n") >= max_lines:
        raise DataFileError(f"has more than {max_lines} lines", path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataFileError(f"line {line}: not UTF-8 text", path) from None


def resolve_contained(name: str, folders: Iterable[Optional[str]]) -> Optional[str]:
    """The regular file `name` names: an absolute path as given (if it is a file);
    a relative name inside the first of `folders` that has it, its real path
    (links resolved) staying inside that folder. None if there is no such file;
    DataFileError if a relative name leads out of every folder that has it."""
    if not isinstance(name, str) or not name or "\0" in name:
        return None
    if os.path.isabs(name):
        return name if os.path.isfile(name) else None
    escaped = None
    for folder in folders:
        if not folder:
            continue
        base = os.path.realpath(folder)
        candidate = os.path.realpath(os.path.join(base, name))
        if os.path.commonpath([base, candidate]) != base:
            escaped = folder
            continue
        if os.path.isfile(candidate):
            return candidate
    if escaped is not None:
        raise DataFileError(f"the relative name leads out of {escaped} ('..' or a link); give "
                            "an absolute path to use a file elsewhere", name)
    return None
