"""The one way assay writes an output: whole or not at all, and never over what it should not.

Every output — ``assay evaluate/label/demo --json/--report``, ``scorer2 --json``, and the
``assay stratified`` SAMPLE/ADJ/JSON files — goes through :func:`write_text` /
:func:`write_bytes`, and a command checks each output path with :func:`check_output` before it
does any work (so no label is paid for an output that cannot be written):

* ``-`` is standard output;
* a regular file, new or existing, is written to a temporary file in the same folder, flushed,
  ``fsync``-ed and renamed over the target (``os.replace``): a reader sees the old file or the
  new one, never half of one, and no ``*.tmp`` is left behind on any failure; an existing
  file keeps its permissions;
* a symbolic link is written *through*: the file it points to is replaced, the link stays;
* a character device or a FIFO (``/dev/null``, ``/dev/stdout``, a named pipe) is written into
  directly, like standard output, and is never replaced by a file; a failed write
  (``/dev/full``) is one :class:`~assay.errors.AssayInputError` line;
* a directory, a socket or any other non-regular file is refused.

Every failure is an :class:`~assay.errors.AssayInputError` naming the option and the path.
"""
from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from assay.errors import AssayInputError

STDOUT = "-"


def _source(path: str | os.PathLike[str], option: str | None) -> str:
    return f"{option} {path}" if option else str(path)


def _target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` lands in: the end of its chain of symbolic links."""
    p = Path(path)
    return Path(os.path.realpath(p)) if p.is_symlink() else p


def _mode(path: Path) -> int | None:
    """``st_mode`` of ``path`` (following links), None when it does not exist."""
    try:
        return os.stat(path).st_mode
    except FileNotFoundError:
        return None


def _is_stream(mode: int | None) -> bool:
    return mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode))


def check_output(path: str | os.PathLike[str], option: str | None = None) -> None:
    """Raise :class:`AssayInputError` unless :func:`write_text` can write ``path``.

    Checks, without writing anything: ``-`` and character devices/FIFOs are fine when
    writable; otherwise the path must not be a directory or other non-regular file, its folder
    must exist, and a temporary file must be creatable there.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_output(d / "result.json", "--json")
    >>> check_output("-")
    >>> try:
    ...     check_output(d, "--json")
    ... except AssayInputError as e:
    ...     print(str(e).endswith("is a directory (expected a file path)"))
    True
    """
    if str(path) == STDOUT:
        return
    src = _source(path, option)
    target = _target(path)
    try:
        mode = _mode(target)
    except OSError as exc:
        raise AssayInputError(src, f"cannot be written: {exc.strerror or exc}") from None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise AssayInputError(src, "is a directory", expected="a file path")
        if _is_stream(mode):
            if not os.access(target, os.W_OK):
                raise AssayInputError(src, "cannot be written: permission denied")
            return
        if not stat.S_ISREG(mode):
            raise AssayInputError(src, "is not a regular file",
                                  expected="a file path, '-' or a device such as /dev/null")
        if not os.access(target, os.W_OK):
            raise AssayInputError(src, "cannot be written: permission denied")
    folder = target.parent
    if not folder.is_dir():
        raise AssayInputError(src, f"its folder {folder} does not exist")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise AssayInputError(src, f"cannot write in folder {folder}: "
                                   f"{exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)


def write_text(path: str | os.PathLike[str], text: str, option: str | None = None,
               errors: str = "strict") -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all; see :func:`write_bytes`.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_text(d / "out.json", "{}\\n")
    >>> (d / "out.json").read_text(), sorted(p.name for p in d.iterdir())
    ('{}\\n', ['out.json'])
    >>> (d / "link.json").symlink_to(d / "out.json")
    >>> write_text(d / "link.json", "[]\\n")
    >>> (d / "link.json").is_symlink(), (d / "out.json").read_text()
    (True, '[]\\n')
    """
    write_bytes(path, text.encode("utf-8", errors), option)


def write_bytes(path: str | os.PathLike[str], data: bytes, option: str | None = None) -> None:
    """Write ``data`` to ``path``: ``-`` is stdout, a device/FIFO is written into, a file is
    replaced atomically (through symbolic links); errors name ``option`` and the path.

    >>> write_bytes("/dev/null", b"gone")
    >>> try:
    ...     write_bytes("/nonexistent-folder/x.json", b"{}", "--json")
    ... except AssayInputError as e:
    ...     print(e)
    --json /nonexistent-folder/x.json: its folder /nonexistent-folder does not exist
    """
    if str(path) == STDOUT:
        _write_stdout(data)
        return
    check_output(path, option)
    target = _target(path)
    mode = _mode(target)
    if _is_stream(mode):
        _write_stream(target, data, _source(path, option))
    else:
        _replace(target, data, mode, _source(path, option))


def _write_stdout(data: bytes) -> None:
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:              # a text-only stream (a test runner's capture)
        sys.stdout.write(data.decode("utf-8", "surrogateescape"))
        sys.stdout.flush()
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.flush()


def _write_stream(target: Path, data: bytes, src: str) -> None:
    """Write into a device or FIFO as one would into stdout (never replacing the node)."""
    try:
        fd = os.open(target, os.O_WRONLY)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    except OSError as exc:
        raise AssayInputError(src, f"cannot be written: {exc.strerror or exc}") from None


def _replace(target: Path, data: bytes, mode: int | None, src: str) -> None:
    """Temporary file beside ``target``, fsync, rename over it; the temporary file never
    outlives a failure."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise AssayInputError(src, f"cannot be written: {exc.strerror or exc}") from None
        raise
    _sync_folder(target.parent)


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    """Make the rename durable (best effort: not every file system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["STDOUT", "check_output", "write_bytes", "write_text"]
