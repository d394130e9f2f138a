"""A deterministic ACP v1 test agent built on the official Python SDK.

Uses ``agent-client-protocol`` 0.12.1 (import name ``acp``): the ``Agent``
interface, ``run_agent`` and the session-update helpers. acp_client's tests
start it with ``python tests/peers/v1_agent.py`` and talk newline-delimited
JSON-RPC over stdin/stdout; logs go to stderr.

Ids: sessions are ``sess-1``, ``sess-2``, ... in creation order; inside a session
the N-th prompt uses the tool call ``call-N``. Message chunks carry no
``messageId`` (as v1 agents usually send them). Modes: ``ask`` (current) and
``code``. The permission request offers ``allow-once`` and ``reject-once``.

A prompt (keywords are searched in its text blocks) produces, in order:
two ``agent_thought_chunk``, two ``agent_message_chunk``, a ``plan``, a
``tool_call`` (pending), [permission], ``tool_call_update`` in_progress,
``tool_call_update`` completed with content, a ``plan`` (completed), one
``agent_message_chunk``, then the response ``{"stopReason": "end_turn"}``.

Keywords:
  permission  ask ``session/request_permission`` before the tool runs; "allow-once"
              runs it, "reject-once" marks it failed, ``cancelled`` ends the turn
              with stopReason ``cancelled``
  slow        wait 50 ms before every update and stream 100 extra message chunks
              so ``session/cancel`` can arrive mid-turn; the prompt then answers
              ``{"stopReason": "cancelled"}``
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from dataclasses import dataclass, field
from typing import Any

import acp
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    ToolCallUpdate,
)

STEP_DELAY_S = 0.05
SLOW_EXTRA_CHUNKS = 100

log = logging.getLogger("v1_agent")


class TurnCancelled(Exception):
    """Raised inside a prompt when the session was cancelled."""


@dataclass
class _Session:
    session_id: str
    cwd: str
    mode_id: str = "ask"
    prompts: int = 0
    cancel_event: asyncio.Event = field(default_factory=asyncio.Event)


class V1TestAgent:
    """ACP v1 agent with scripted, deterministic turns."""

    def __init__(self) -> None:
        self._conn: Any = None
        self._sessions: dict[str, _Session] = {}

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        log.info("initialize, client protocolVersion %s", protocol_version)
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(
                load_session=False, prompt_capabilities=PromptCapabilities()
            ),
            agent_info=Implementation(
                name="acp-client-test-v1-agent", title="Test agent (v1)", version="1.0.0"
            ),
            auth_methods=[],
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        session_id = f"sess-{len(self._sessions) + 1}"
        self._sessions[session_id] = _Session(session_id, cwd)
        log.info("session/new %s", session_id)
        return NewSessionResponse(
            session_id=session_id,
            modes=SessionModeState(
                current_mode_id="ask",
                available_modes=[
                    SessionMode(id="ask", name="Ask", description="Ask before changes"),
                    SessionMode(id="code", name="Code", description="Edit freely"),
                ],
            ),
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self._get(session_id)
        if mode_id not in ("ask", "code"):
            raise acp.RequestError.invalid_params({"modeId": mode_id})
        session.mode_id = mode_id
        await self._conn.session_update(session_id, acp.helpers.update_current_mode(mode_id))
        return SetSessionModeResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log.info("session/cancel %s", session_id)
        session = self._sessions.get(session_id)
        if session is not None:
            session.cancel_event.set()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._get(session_id)
        session.prompts += 1
        session.cancel_event = asyncio.Event()
        text = "\n".join(getattr(block, "text", "") for block in prompt)
        log.info("session/prompt %s #%d: %r", session_id, session.prompts, text)
        try:
            await self._turn(session, text)
        except TurnCancelled:
            log.info("turn cancelled")
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason="end_turn")

    def _get(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise acp.RequestError.resource_not_found(session_id)
        return session

    async def _turn(self, session: _Session, text: str) -> None:
        slow = "slow" in text
        call_id = f"call-{session.prompts}"

        async def send(update: Any) -> None:
            if slow:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(session.cancel_event.wait(), STEP_DELAY_S)
            if session.cancel_event.is_set():
                raise TurnCancelled
            await self._conn.session_update(session.session_id, update)

        def plan(status: Any) -> Any:
            return acp.update_plan(
                [
                    acp.plan_entry("Read the failing test", priority="high", status=status),
                    acp.plan_entry("Run the test suite", priority="medium", status=status),
                ]
            )

        await send(acp.update_agent_thought_text("Let me think"))
        await send(acp.update_agent_thought_text(" about it."))
        await send(acp.update_agent_message_text("Hello"))
        await send(acp.update_agent_message_text(", world."))
        for i in range(SLOW_EXTRA_CHUNKS if slow else 0):
            await send(acp.update_agent_message_text(f" chunk {i + 1}."))
        await send(plan("pending"))
        await send(
            acp.start_tool_call(
                call_id,
                "Run the test suite",
                kind="execute",
                status="pending",
                raw_input={"command": "pytest -q"},
            )
        )

        allowed = True
        if "permission" in text:
            response = await self._conn.request_permission(
                session_id=session.session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id=call_id, title="Run the test suite", kind="execute"
                ),
                options=[
                    PermissionOption(option_id="allow-once", name="Allow", kind="allow_once"),
                    PermissionOption(option_id="reject-once", name="Reject", kind="reject_once"),
                ],
            )
            outcome = response.outcome
            log.info("permission outcome %r", outcome)
            if not isinstance(outcome, AllowedOutcome):
                raise TurnCancelled
            allowed = outcome.option_id == "allow-once"
            if not allowed:
                await send(
                    acp.update_tool_call(
                        call_id,
                        status="failed",
                        content=[acp.tool_content(acp.text_block("Permission denied."))],
                    )
                )

        if allowed:
            await send(acp.update_tool_call(call_id, status="in_progress"))
            await send(
                acp.update_tool_call(
                    call_id,
                    status="completed",
                    content=[acp.tool_content(acp.text_block("All tests passed."))],
                    raw_output={"exitCode": 0},
                )
            )
        await send(plan("completed"))
        await send(acp.update_agent_message_text(" Done."))


async def _main() -> None:
    # V1TestAgent implements only the methods it needs; the SDK answers the
    # others with -32601 (method not found).
    await acp.run_agent(V1TestAgent())  # type: ignore[arg-type]


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[v1_agent] %(message)s")
    asyncio.run(_main())
