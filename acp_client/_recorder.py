"""The traffic recorder: writes the ``acp-client`` log format (LOG-FORMATS.md section 3).

One compact JSON object per line, keys in the order ``direction``, ``message`` / ``text`` /
``raw``, ``time``; flushed per line, so a crash leaves at most one partial line. An
incoming line that is JSON is embedded as it was read (no re-encoding); one that is not
is written as ``raw``.
"""

from __future__ import annotations

import time
from typing import IO, Any

import msgspec

from ._codec import PLAIN_DECODER as _PLAIN
from ._codec import decode_leniently
from ._framing import DEFAULT_MAX_LINE, LineBuffer, head_text

__all__ = ["Recorder", "RecordingError"]

_ENC = msgspec.json.Encoder()


class RecordingError(OSError):
    """The recording could not be opened or written (the file is named in the message)."""


class Recorder:
    """Appends records of a live session to a binary file.

    Args:
        target: a path (the file is created or truncated) or a binary file object.
        clock: returns seconds since the Unix epoch (for tests).
    """

    def __init__(self, target: str | IO[bytes], *, clock: Any = time.time) -> None:
        self.name = target if isinstance(target, str) else str(getattr(target, "name", target))
        if isinstance(target, str):
            try:
                self._file: IO[bytes] = open(target, "wb")  # noqa: SIM115 - owned until close()
            except OSError as exc:
                raise self._error(exc) from exc
            self._owned = True
        else:
            self._file = target
            self._owned = False
        self._clock = clock
        self._lines: LineBuffer | None = None  # the agent's stdout, framed for the record

    def _error(self, exc: OSError) -> RecordingError:
        error = RecordingError(f"cannot write the recording {self.name!r}: {exc.strerror or exc}")
        error.errno = exc.errno
        return error

    def _write(self, head: bytes, body: bytes) -> None:
        stamp = _ENC.encode(self._clock())
        try:
            self._file.write(b'{"direction":' + head + body + b',"time":' + stamp + b"}\n")
            self._file.flush()
        except OSError as exc:
            raise self._error(exc) from exc

    def message(self, direction: str, line: bytes) -> None:
        """Record one line of JSON-RPC text sent in ``direction`` (a batch included)."""
        head = _ENC.encode(direction)
        try:
            value = _PLAIN.decode(line)
        except (msgspec.DecodeError, RecursionError):
            try:
                decode_leniently(line)
            except (ValueError, RecursionError):
                if direction == "incoming":
                    text = line.decode("utf-8", errors="replace")
                    self._write(head, b',"raw":' + _ENC.encode(text))
                return
            # Valid JSON msgspec refuses (a lone surrogate escape, a number beyond a
            # double): the line itself is written, so a replay reads what the live reader did.
            self._write(head, b',"message":' + line.strip(b" \t\r\n"))
            return
        # The parsed message, written compact (the agent's own spacing is not kept).
        self._write(head, b',"message":' + _ENC.encode(value))

    def incoming(self, data: bytes, max_line: int = DEFAULT_MAX_LINE) -> None:
        """Record what the agent wrote to its stdout (split anywhere; ``b""``: it ended).

        Each line is a record (:meth:`message`), one over ``max_line`` bytes a trace of it
        (:meth:`too_long`); blank lines are not recorded.
        """
        if self._lines is None:
            self._lines = LineBuffer(max_line)
        for line in self._lines.feed(data) if data else self._lines.flush():
            if isinstance(line, bytes):
                if line.strip():
                    self.message("incoming", line)
            else:
                self.too_long(line.head, line.size)

    def too_long(self, head: bytes, size: int) -> None:
        """Record a stdout line dropped for its size: its first bytes as ``raw``, with ``…``.

        The extra key ``lineTooLong`` holds the line's full size (readers ignore keys they
        do not know, LOG-FORMATS 3.1); a replay reports the record as non-JSON output.
        """
        text = head_text(head)
        self._write(
            b'"incoming"',
            b',"raw":' + _ENC.encode(text) + b',"lineTooLong":' + _ENC.encode(size),
        )

    def stderr(self, text: str) -> None:
        """Record one line of the agent's stderr (without its line terminator)."""
        if text.endswith("\r"):  # a CRLF terminator
            text = text[:-1]
        self._write(b'"stderr"', b',"text":' + _ENC.encode(text))

    def close(self) -> None:
        """Flush, and close the file if the recorder opened it."""
        try:
            try:
                self._file.flush()
            finally:
                if self._owned:
                    self._file.close()
        except OSError as exc:
            raise self._error(exc) from exc
