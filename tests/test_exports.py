"""The public surface is pinned, and ``import acp_client`` stays light."""

import inspect
import subprocess
import sys

import acp_client


def test_public_names_are_exported_and_documented() -> None:
    for name in acp_client.__all__:
        obj = getattr(acp_client, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, f"{name} has no docstring"


def test_import_does_not_pull_heavy_dependencies() -> None:
    code = (
        "import sys, acp_client, acp_client.schema, acp_client.logs, acp_client.testing\n"
        "acp_client.summarize_many([]), acp_client.SessionSummary\n"
        "heavy = ('trio', 'hypothesis', 'rich', 'pyte', 'anyio', 'dask', 'distributed',\n"
        "         'pyarrow')\n"
        "bad = [m for m in heavy if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_bare_import_builds_nothing_until_first_use() -> None:
    """``import acp_client`` imports none of the core; the first use of a name imports it."""
    code = (
        "import sys, acp_client\n"
        "core = ('acp_client._codec', 'acp_client._connection', 'acp_client._replay',\n"
        "        'acp_client._schema', 'acp_client._v1', 'acp_client.logs', 'acp_client.events')\n"
        "print(','.join(m for m in core if m in sys.modules))\n"
        "acp_client.Connection\n"
        "print('acp_client._connection' in sys.modules, 'acp_client.cli' in sys.modules)\n"
        "print(sorted(set(acp_client.__all__) - set(dir(acp_client))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["", "True False", "[]"]


def test_the_v1_adapter_is_imported_only_for_v1() -> None:
    """A v2 log or agent never imports the v1 adapter (issue 23: the CLI's start-up); a v1
    one does, at the moment it is recognised."""
    code = (
        "import sys, acp_client\n"
        "from acp_client.testing import log_lines\n"
        "init = {'jsonrpc': '2.0', 'id': 0, 'method': 'initialize', 'params': {}}\n"
        "def log(version):\n"
        "    reply = {'jsonrpc': '2.0', 'id': 0, 'result': {'protocolVersion': version}}\n"
        "    lines = log_lines([('outgoing', init), ('incoming', reply)], 'jsonrpc')\n"
        "    return ''.join(line + '\\n' for line in lines).encode()\n"
        "adapter = 'acp_client._v1.adapter'\n"
        "acp_client.replay_log(log(2)); acp_client.Connection().receive_data(b'{}\\n')\n"
        "print(adapter in sys.modules)\n"
        "acp_client.replay_log(log(1))\n"
        "print(adapter in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["False", "True"]


def test_unknown_name_is_an_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError, match="no_such_name"):
        acp_client.no_such_name  # noqa: B018


PINNED = {
    "acp_client": {
        "ACPError", "CompactionState", "Connection", "Decoder", "Diagnostic", "Direction",
        "FailedRequest", "LimitExceeded", "ListView", "LocalProtocolError", "MessageState",
        "PermissionState", "PlanState", "PromptState", "RemoteProtocolError", "ReplayBatch",
        "ReplayResult", "ReplayedLog", "Replayer", "Role",
        "SNAPSHOT_FORMAT", "SentRequest", "Session", "SessionSummary", "TerminalState",
        "TimelineEntry", "ToolCallState", "__version__", "convert", "encode", "events",
        "load_session", "replay_log", "replay_many", "schema", "summarize_many", "to_builtins",
        "view",
    },
    "acp_client.view": {
        "ContentRead", "ConversationView", "EntryView", "SessionView", "TerminalRead",
        "TerminalView",
    },
    "acp_client.v1": {"AdapterOrigin", "Direction", "V1Adapter", "detect_v1", "v1_hint"},
    "acp_client.testing": {
        "FakeAgent", "Handler", "LOG_FORMATS", "Loopback", "ReferenceModel", "ScriptedAgent",
        "StoredLog", "log_lines",
    },
    "acp_client.testing.strategies": {
        "CONTENT_BLOCK_KINDS", "UPDATE_KINDS", "byte_stream_splits", "child_sessions",
        "chunked_message_updates", "content_blocks", "conversations", "damaged_update_pairs",
        "prompt_echo_interleavings", "rechunkings", "session_message_traffic", "stored_logs",
        "terminal_byte_splits", "updates", "v1_streams",
    },
    "acp_client.logs": {
        "FORMATS", "FormatId", "LogIterator", "LogReadResult", "LogReader", "LogRecord",
        "LogSource", "METHOD_SIDES", "RESULT_SIGNATURES", "iter_log", "read_log",
    },
    "acp_client.events": {
        "AgentRequestReceived", "AvailableCommandsUpdated", "CancelRequested",
        "CompactionChunkAppended", "CompactionUpserted", "ConfigOptionsUpdated", "ContentChange",
        "Event", "InvalidMessageReceived", "LimitReached", "UnknownNotificationReceived",
        "MessageChunkAppended", "MessageUpserted",
        "NoticeReceived", "PermissionAnswered", "PermissionRequested", "PermissionWithdrawn",
        "PlanUpdated", "PromptAccepted", "PromptEchoed", "PromptRejected", "PromptSent",
        "ReplayFinished", "ReplayStarted", "ResponseReceived", "SessionAnnounced",
        "SessionClosed", "SessionCreated", "SessionInfoUpdated", "StateChanged",
        "TerminalOutputAppended", "TerminalUpserted", "ToolCallChunkAppended", "ToolCallUpserted",
        "TreeUpdateApplied", "UnknownUpdateReceived", "UnmatchedResponseReceived",
        "UpdateRejected", "UsageUpdated",
        # the v2 Preview (docs/preview.md)
        "PlanRemoved", "SessionMessageUpserted", "SessionMessageChunkAppended",
        "PromptSuggestionsUpdated", "CursorUpserted",
        # the event contract (docs/events.md)
        "EntriesChanged", "EntriesRemoved",
    },
    "acp_client.transport": {
        "AgentConnection", "AgentError", "AgentExited", "AgentNotReading", "DEFAULT_MAX_UNSENT",
        "EventStream", "PermissionHandler",
        "PromptHandle", "RecordingError", "RequestFailed", "RequestHandler", "RequestTimeout",
        "allow_once", "open_agent", "reject",
    },
}  # fmt: skip


def test_public_surfaces_are_pinned() -> None:
    import importlib

    for module_name, names in PINNED.items():
        module = importlib.import_module(module_name)
        assert set(module.__all__) == names, module_name
        for name in names:
            assert hasattr(module, name), f"{module_name}.{name}"


def test_implementation_lives_in_underscore_modules() -> None:
    from pathlib import Path

    package = Path(acp_client.__file__).parent
    public = {p.name for p in package.glob("*.py") if not p.name.startswith("_")}
    assert public == {"events.py", "schema.py", "transport.py", "v1.py", "view.py"}


def test_events_module_is_the_public_namespace_of_every_event() -> None:
    import msgspec

    from acp_client import _events, events

    assert events.__doc__
    classes = {
        name
        for name, obj in vars(_events).items()
        if inspect.isclass(obj) and issubclass(obj, msgspec.Struct) and not name.startswith("_")
    }
    assert classes <= set(events.__all__)
    for name in events.__all__:
        assert getattr(events, name) is getattr(_events, name)
        if name in acp_client.__all__:
            assert getattr(acp_client, name) is getattr(events, name)
        if inspect.isclass(getattr(events, name)):
            cls = getattr(events, name)
            assert issubclass(cls, events.Event) and cls.__struct_config__.frozen, name


def test_import_acp_client_binds_the_schema_module() -> None:
    code = "import acp_client\nprint(acp_client.schema.TextContent.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "TextContent"
