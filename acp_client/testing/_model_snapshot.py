"""The reference model's snapshot writer (SNAPSHOT.md, ``acp-client/snapshot@1``).

Owns: how one session's plain state is written as a snapshot session object, with the
effective defaults of SNAPSHOT.md and the local cancel overlay (spec 7.8). Part of
:class:`~acp_client.testing.ReferenceModel`.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from ._model_state import Key, _Entity, _key_of_entity, _Session


def session_snapshot(s: _Session, protocol_version: int | None) -> dict[str, Any]:
    """One session of the snapshot (fresh plain data); ``protocol_version`` as negotiated."""
    out: dict[str, Any] = {"sessionId": s.session_id, "announced": s.announced}
    if protocol_version is not None:
        out["protocolVersion"] = protocol_version
    if s.state is not None:
        out["state"] = s.state
    if s.closed and s.close_succeeded:
        out["closed"] = True
    out["completedTurns"] = list(s.completed)
    out["timeline"] = [_entry(s, key, s.entities[key]) for key in s.timeline]
    out["terminals"] = [
        {
            **t.extra,
            **t.fields,
            "output": base64.b64encode(bytes(t.output)).decode("ascii"),
            "truncatedBytes": 0,
        }
        for t in s.terminals.values()
    ]
    out["plans"] = [p.fields for p in s.plans.values()]
    if s.commands is not None:
        out["availableCommands"] = s.commands
    if s.config is not None:
        out["configOptions"] = s.config
    if s.info is not None:
        out["sessionInfo"] = {**s.info.extra, **s.info.fields}
    if s.usage is not None:
        out["usage"] = s.usage
    out["notices"] = s.notices
    prompts = []
    for p in s.prompts:
        prompt = dict(p)
        prompt["echoed"] = prompt.get("messageId") in s.user_ids_seen
        prompts.append(prompt)
    out["prompts"] = prompts
    out["permissionRequests"] = s.permissions
    out["unknownUpdates"] = s.unknown
    # ACP v2 Preview section 4: every new key absent when unused
    if s.parent is not None:
        out["parentSessionId"] = s.parent
        out["subagent"] = s.subagent
    if s.children:
        out["children"] = s.children
    if s.replay is not None and s.replay_shown:  # P21: on a connection speaking the Preview
        out["replay"] = s.replay
    if s.suggestions is not None:  # the opt-ins (P32-P44)
        out["promptSuggestions"] = s.suggestions
    if s.cursors is not None:
        out["cursors"] = list(s.cursors.values())
    if s.state_unknown and s.last_known is not None:
        out["lastKnownState"] = s.last_known
    out["unretained"] = [_entry(s, _key_of_entity(e), e) for e in s.unretained]
    return copy.deepcopy(out)


def _entry(s: _Session, key: Key, e: _Entity) -> dict[str, Any]:
    """A timeline (or unretained) entry as SNAPSHOT.md writes it."""
    if key[0] == "message":
        entry: dict[str, Any] = {**e.extra, "entry": "message", **e.fields}
    elif key[0] == "toolCall":
        entry = {**e.extra, "entry": "toolCall", **e.fields}
        entry.setdefault("kind", "other")  # SNAPSHOT.md: effective defaults
        entry.setdefault("status", "pending")
        if key[1] in s.locally_cancelled:
            entry["status"] = "cancelled"  # spec 7.8: local overlay, shown only
    elif key[0] == "sessionMessage":  # ACP v2 Preview P12
        entry = {**e.extra, "entry": "sessionMessage", **e.fields}
    else:
        entry = {**e.extra, "entry": "compaction", **e.fields}
    entry.pop("excludedFromContext", None)  # the snapshot's own key, never an extra (R35)
    if e.excluded:
        entry["excludedFromContext"] = True
    return entry
