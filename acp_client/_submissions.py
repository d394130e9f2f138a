"""The prompt submissions of a connection, from the host's side (10; P26-P30).

:class:`Submissions` is the part of :class:`~._connection.Connection` that sends prompts
(with an idempotency key on request, and the retries of a keyed submission) and answers
questions about them: the submission of a request id, whether its turn ended, its stop
reason, its user message (ACP-V2-CLIENT-STATE.md section 10, ACP-V2-PREVIEW 3.4). What
responses and updates change is the business of ``_methods`` and ``_prompts``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import _schema as s
from ._context import Context
from ._entities import MessageState
from ._errors import LocalProtocolError
from ._preflight import Preflight
from ._prompts import PromptState
from ._rpc import SentRequest
from ._session import Session
from ._tree import plain_update

__all__ = ["Submissions"]

#: P28: a key is 1 to 255 characters.
MAX_KEY = 255


class Submissions:
    """Sending prompts and reading their submissions (a base of ``Connection``)."""

    __slots__ = ()
    _ctx: Context
    _sessions: Mapping[str, Session]
    _preflight: Preflight

    send_request: Callable[[str, Any], SentRequest]  # ``Connection.send_request``

    def prompt(self, request_id: int | str) -> PromptState:
        """The prompt submission sent with that request id."""
        return self._ctx.prompts[request_id]

    def prompt_finished(self, request_id: int | str) -> bool:
        """Whether the turn of an accepted prompt has ended (an ``idle`` completed it)."""
        prompt = self._ctx.prompts[request_id]
        if prompt.turns_before is None:
            return False
        session = self._sessions[prompt.session_id]
        return len(session.completed_turns) > prompt.turns_before

    def prompt_stop_reason(self, request_id: int | str) -> str | None:
        """The stop reason of the prompt's turn once it ended (``None`` if not reported).

        A prompt restored from a snapshot whose turn had ended gives ``None`` (R90).

        Raises:
            LocalProtocolError: the turn has not ended (see :meth:`prompt_finished`).
        """
        if not self.prompt_finished(request_id):
            raise LocalProtocolError(f"the turn of prompt {request_id!r} has not ended")
        prompt = self._ctx.prompts[request_id]
        turn: int = prompt.turns_before  # type: ignore[assignment]
        if turn < 0:  # R90: restored, its turn ended before the snapshot
            return None
        reason: str | None = self._sessions[prompt.session_id].completed_turns[turn]
        return reason

    def prompt_message(self, request_id: int | str) -> MessageState | None:
        """The user message the prompt was inserted as, once its update was applied."""
        prompt = self._ctx.prompts[request_id]
        if prompt.message_id is None:
            return None
        return self._sessions[prompt.session_id].message("user", prompt.message_id)

    def send_prompt(
        self,
        session_id: str,
        prompt: str | Sequence[s.ContentBlock],
        *,
        idempotency_key: str | bool | None = None,
    ) -> SentRequest:
        """``session/prompt`` with text or content blocks; the returned id tracks it.

        ``idempotency_key`` (ACP-V2-PREVIEW P26-P28): ``True`` generates a key for a new
        submission (a UUID); a string sends that key. An agent inserts the prompt at most
        once per key, so a prompt whose response was lost can be sent again under its key
        (:meth:`retry_prompt`) without inserting it twice. Without a key nothing changes.

        Raises:
            TypeError: ``prompt`` is bytes.
            LocalProtocolError: the prompt is empty (no block, or ``""``), or holds a
                block the agent's prompt capabilities do not allow (C5); live, before a
                successful ``initialize`` or for a session not set up here (by a
                ``session/new`` answer or a ``session/resume``) or closed (C1); live, a
                child session (P10); a key that is empty or over 255 characters, or one
                the session already used for other content (P28).
        """
        blocks = self._preflight.prompt(session_id, prompt)
        params = s.PromptRequest(session_id=session_id, prompt=blocks)
        if idempotency_key is not None and idempotency_key is not False:
            key = str(uuid.uuid4()) if idempotency_key is True else idempotency_key
            self._check_key(session_id, key, blocks)
            params.idempotency_key = key
        return self.send_request("session/prompt", params)

    def retry_prompt(self, request_id: int | str) -> SentRequest:
        """Send a keyed submission again: its stored prompt under its key (P27, P28).

        ``request_id`` is any attempt's id. The new attempt joins the same submission
        (:meth:`prompt` of either id); the agent inserts the prompt at most once.

        Raises:
            KeyError: no prompt was sent with that id.
            LocalProtocolError: the prompt was sent without an idempotency key (resending
                it could insert it twice; 10.5), or the checks of :meth:`send_prompt`.
        """
        prompt = self._ctx.prompts[request_id]
        if prompt.prompt is None and prompt.idempotency_key is not None:
            raise LocalProtocolError(
                f"prompt {request_id!r} was restored from a snapshot, which does not keep its"
                " content: send it again with send_prompt(..., idempotency_key="
                f"{prompt.idempotency_key!r}) (R90)"
            )
        if prompt.idempotency_key is None:
            raise LocalProtocolError(
                f"prompt {request_id!r} has no idempotency key: resending it could insert"
                " it twice (send it with idempotency_key=True to make it retryable)"
            )
        return self.send_prompt(
            prompt.session_id, prompt.prompt, idempotency_key=prompt.idempotency_key
        )

    def _check_key(self, session_id: str, key: str, blocks: list[Any]) -> None:
        """P28: a key of 1-255 characters; a known key only with its stored content."""
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY:
            raise LocalProtocolError("an idempotency key is a string of 1 to 255 characters")
        session = self._sessions.get(session_id)
        for sent in reversed(session.prompts if session is not None else []):
            if sent.idempotency_key == key:
                # restored, its content unknown (R90): the retry's is taken as it
                if sent.prompt is not None and plain_update(sent.prompt) != plain_update(blocks):
                    raise LocalProtocolError(
                        f"idempotency key {key!r} was sent with other content: a retry"
                        " resends the stored prompt unchanged (P28)"
                    )
                return
