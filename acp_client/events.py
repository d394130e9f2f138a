"""The events of acp_client: what happened, one small frozen value per thing.

:meth:`Session.apply <acp_client.Session.apply>` returns the event of the one
``session/update`` it applied; a :class:`~acp_client.Connection` returns a list of events
for what it received (``receive_data``, ``receive_line``, ``receive_message``...) and keeps
those of what the client sent (``take_sent_events``), in the order things happened. An
event names the entity that changed and how, so that a UI re-renders only that; the state
itself is read from the session afterwards (ACP-V2-CLIENT-STATE.md, the section of each
update kind).

The model, as in h11 and h2:

* names are past tense (``MessageChunkAppended``, ``PromptAccepted``): an event reports
  what was applied, it never asks for anything, except :class:`PermissionRequested` and
  :class:`AgentRequestReceived`, which report a request that waits for an answer;
* events are frozen msgspec Structs: cheap to create, immutable, comparable by value;
  every event is an instance of :class:`Event`, and the per-session ones carry
  ``session_id``;
* every applied ``session/update`` yields exactly one event for the entity it changed (an
  update that created a terminal by naming it yields a :class:`TerminalUpserted` after it);
  an update that cannot be applied yields :class:`UpdateRejected` (kept raw, with its
  error), a line that cannot be understood :class:`InvalidMessageReceived`;
* ``created`` says that the update made the entity; ``ContentChange`` says what an upsert
  did to a content list (``"unchanged"``, ``"replaced"`` or ``"cleared"``);
* an entity event carries the entity's ``version`` after the change and, for a timeline
  entry, its ``index``; :class:`EntriesChanged` and :class:`EntriesRemoved` name ranges of
  entries a refusal changed or a replay removed. docs/events.md is the contract a view
  folds events by (E1-E9), and :mod:`acp_client.view` follows it for you.

The kinds:

* the conversation: :class:`MessageChunkAppended`, :class:`MessageUpserted`,
  :class:`ToolCallChunkAppended`, :class:`ToolCallUpserted`,
  :class:`TerminalOutputAppended`, :class:`TerminalUpserted`, :class:`PlanUpdated`,
  :class:`PlanRemoved`, :class:`CompactionChunkAppended`, :class:`CompactionUpserted`,
  :class:`SessionMessageUpserted`, :class:`SessionMessageChunkAppended` (inter-session
  messages of the v2 Preview);
* opt-in (unstable) session state: :class:`PromptSuggestionsUpdated`,
  :class:`CursorUpserted`;
* the session around it: :class:`AvailableCommandsUpdated`, :class:`ConfigOptionsUpdated`,
  :class:`SessionInfoUpdated`, :class:`UsageUpdated`, :class:`NoticeReceived`,
  :class:`StateChanged`, :class:`UnknownUpdateReceived`, :class:`UpdateRejected`;
* ranges of the timeline: :class:`EntriesChanged`, :class:`EntriesRemoved`;
* its life: :class:`SessionCreated`, :class:`SessionAnnounced`, :class:`SessionClosed`,
  :class:`ReplayStarted`, :class:`ReplayFinished`, :class:`CancelRequested`,
  :class:`TreeUpdateApplied` (a child announced, a replay's end marker);
* prompts and permissions: :class:`PromptSent`, :class:`PromptAccepted`,
  :class:`PromptRejected`, :class:`PromptEchoed`, :class:`PermissionRequested`,
  :class:`PermissionAnswered`, :class:`PermissionWithdrawn`;
* the connection: :class:`AgentRequestReceived`, :class:`ResponseReceived`,
  :class:`UnmatchedResponseReceived`, :class:`InvalidMessageReceived`.

Match on the class::

    for event in connection.receive_data(data):
        match event:
            case MessageChunkAppended(message_id=mid):
                redraw_message(mid)
            case PermissionRequested():
                ask_user(event)
"""

from ._events import *  # noqa: F403
from ._events import __all__ as __all__
