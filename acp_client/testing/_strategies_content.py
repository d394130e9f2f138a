"""Hypothesis strategies for ACP v2 values: content blocks and the items of update arrays.

Private helpers of :mod:`acp_client.testing.strategies`; every value generated here is
valid against schema-v2.json (2.4.0) unless the name says ``invalid``.
"""

from __future__ import annotations

import base64
import operator
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

Json = Any

CONTENT_BLOCK_KINDS = ("text", "image", "audio", "resource_link", "resource", "unknown")
"""The kinds :func:`content_blocks` can generate (``unknown``: a custom ``_x`` type)."""

# -- JSON leaves and _meta ----------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
json_values: st.SearchStrategy[Json] = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
metas = st.dictionaries(st.text(max_size=6), json_values, max_size=3)
"""A `_meta` object: arbitrary keys, JSON values (``null`` values included)."""

custom_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8).map(
    lambda s: "_" + s
)
"""A custom (extension) enum value: always begins with ``_`` (spec 13.1)."""

absolute_paths = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=8),
    min_size=1,
    max_size=3,
).map(lambda parts: "/" + "/".join(parts))

base64_data = st.binary(max_size=24).map(lambda b: base64.b64encode(b).decode("ascii"))


def _optional(required: dict[str, Any], **optional: Any) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(required, optional=optional)


# -- content blocks (spec 5) --------------------------------------------------------------

annotation_objects = _optional(
    {},
    audience=st.lists(st.sampled_from(["user", "assistant"]), max_size=2),
    priority=st.floats(min_value=0, max_value=1),
    lastModified=st.just("2025-01-01T00:00:00Z"),
    _meta=metas,
)

_BLOCK_STRATEGIES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "text": _optional(
        {"type": st.just("text"), "text": st.text()}, annotations=annotation_objects, _meta=metas
    ),
    "image": _optional(
        {
            "type": st.just("image"),
            "data": base64_data,
            "mimeType": st.sampled_from(["image/png", "image/jpeg"]),
        },
        uri=st.just("https://example.com/a.png"),
        annotations=annotation_objects,
    ),
    "audio": _optional(
        {"type": st.just("audio"), "data": base64_data, "mimeType": st.just("audio/wav")},
        _meta=metas,
    ),
    "resource_link": _optional(
        {
            "type": st.just("resource_link"),
            "name": st.text(max_size=10),
            "uri": absolute_paths.map(lambda p: "file://" + p),
        },
        title=st.text(max_size=10),
        description=st.text(max_size=10),
        mimeType=st.just("text/plain"),
        size=st.integers(min_value=0, max_value=2**40),
        icons=st.lists(
            _optional({"src": st.just("https://example.com/i.png")}, theme=st.just("dark")),
            max_size=2,
        ),
    ),
    "resource": st.fixed_dictionaries(
        {
            "type": st.just("resource"),
            "resource": st.one_of(
                _optional(
                    {"uri": absolute_paths.map(lambda p: "file://" + p), "text": st.text()},
                    mimeType=st.just("text/x-python"),
                ),
                _optional(
                    {"uri": absolute_paths.map(lambda p: "file://" + p), "blob": base64_data},
                    mimeType=st.just("application/octet-stream"),
                ),
            ),
        }
    ),
    "unknown": st.builds(
        lambda t, extra: {**extra, "type": t},
        custom_names,
        st.dictionaries(st.sampled_from(["payload", "x", "n"]), json_values, max_size=2),
    ),
}


def content_blocks(
    kinds: Sequence[str] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    r"""ContentBlock objects (spec 5), valid against the v2 schema.

    ``kinds`` restricts the block types, from ``CONTENT_BLOCK_KINDS`` (``"unknown"`` is a
    custom ``_x`` type kept raw by a client). Text is arbitrary Unicode (no surrogates).

    Example::

        @given(content_blocks(kinds=["text"]))
        def test_text(block):
            assert block["type"] == "text"

        # draws look like {"type": "text", "text": "ŧ\\x00"} or
        # {"type": "_q", "payload": [1]}
    """
    if kinds is None:
        kinds = CONTENT_BLOCK_KINDS
    if isinstance(kinds, str) or not isinstance(kinds, Sequence) or not kinds:
        raise InvalidArgument(f"kinds must be a non-empty sequence of names, not {kinds!r}")
    bad = [k for k in kinds if k not in _BLOCK_STRATEGIES]
    if bad:
        raise InvalidArgument(f"unknown content block kinds {bad}; use {CONTENT_BLOCK_KINDS}")
    return st.one_of([_BLOCK_STRATEGIES[k] for k in kinds])


text_blocks = content_blocks(["text"])
any_blocks = content_blocks()

# -- tool call items (spec 7.5-7.7) -------------------------------------------------------

diff_changes = st.one_of(
    st.fixed_dictionaries(
        {"operation": st.sampled_from(["add", "delete", "modify"]), "path": absolute_paths},
        optional={"fileType": st.sampled_from(["text", "binary"]), "mimeType": st.just("text/x")},
    ),
    st.fixed_dictionaries(
        {
            "operation": st.sampled_from(["move", "copy"]),
            "oldPath": absolute_paths,
            "path": absolute_paths,
        }
    ),
    st.fixed_dictionaries({"operation": custom_names, "path": absolute_paths}),
)


def tool_call_contents(terminal_ids: st.SearchStrategy[str] | None = None) -> Any:
    """ToolCallContent items: content, diff, terminal reference, custom."""
    tids = terminal_ids if terminal_ids is not None else st.sampled_from(["t1", "t2"])
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("content"), "content": any_blocks}),
        _optional(
            {"type": st.just("diff"), "changes": st.lists(diff_changes, max_size=2)},
            patch=st.fixed_dictionaries(
                {"format": st.just("git_patch"), "text": st.just("diff --git /a /a\n")}
            ),
        ),
        st.fixed_dictionaries({"type": st.just("terminal"), "terminalId": tids}),
        st.fixed_dictionaries({"type": custom_names, "data": json_values}),
    )


locations = _optional({"path": absolute_paths}, line=st.integers(1, 10_000), _meta=metas)

background_items = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("terminal"), "terminalId": st.sampled_from(["t1", "t2"])}
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_call"), "toolCallId": st.sampled_from(["c1", "c2"])}
    ),
    st.fixed_dictionaries({"type": custom_names}),
)

plan_entries = _optional(
    {
        "content": st.text(max_size=20),
        "priority": st.sampled_from(["high", "medium", "low", "_urgent"]),
        "status": st.sampled_from(["pending", "in_progress", "completed", "cancelled"]),
    },
    _meta=metas,
)

command_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=8)
commands = st.one_of(
    _optional(
        {"type": st.just("command"), "name": command_names, "description": st.text(max_size=10)},
        input=st.one_of(
            st.none(), st.fixed_dictionaries({"type": st.just("text"), "hint": st.text(max_size=5)})
        ),
    ),
    st.fixed_dictionaries(
        {"type": custom_names, "name": command_names, "description": st.text(max_size=10)}
    ),
)

_NAME = operator.itemgetter("name")  # command names are unique within a list (A29)
_CONFIG_ID = operator.itemgetter("configId")  # and so are config option ids (A19)

_select_values = st.lists(
    st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True
)


@st.composite
def config_options(draw: st.DrawFn) -> dict[str, Any]:
    """One SessionConfigOption: select (flat or grouped), boolean or custom."""
    base: dict[str, Any] = {
        "configId": draw(st.sampled_from(["mode", "model", "effort"])),
        "name": draw(st.text(max_size=8)),
    }
    if draw(st.booleans()):
        base["category"] = draw(st.sampled_from(["mode", "model", "thought_level", "_x"]))
    kind = draw(st.sampled_from(["select", "select-groups", "boolean", "custom"]))
    if kind == "boolean":
        return {**base, "type": "boolean", "currentValue": draw(st.booleans())}
    if kind == "custom":
        return {**base, "type": draw(custom_names)}
    values = draw(_select_values)
    opts: list[dict[str, Any]] = [{"value": v, "name": v.upper()} for v in values]
    if kind == "select-groups":
        opts = [{"groupId": "g", "name": "Group", "options": opts}]
    return {**base, "type": "select", "currentValue": values[0], "options": opts}


# -- invalid items for skip-invalid-items arrays (spec 13.5 S) ----------------------------
# Each is clearly invalid: not an object, or a known discriminator with a required field
# missing or of the wrong type.

invalid_blocks = st.sampled_from(
    [5, "x", None, {}, {"type": 3}, {"type": "text"}, {"type": "image", "data": "AA=="}]
)
invalid_tool_contents = st.sampled_from(
    [5, {}, {"type": "content"}, {"type": "terminal"}, {"type": "diff", "changes": "x"}]
)
invalid_locations = st.sampled_from([5, {}, {"line": 3}, {"path": 5}])
invalid_plan_entries = st.sampled_from([5, {"content": "x"}, {"content": "x", "priority": "high"}])
invalid_commands = st.sampled_from(
    [5, {"name": "x", "description": "y"}, {"type": "command", "name": "x"}]
)
invalid_config_options = st.sampled_from(
    [
        5,
        {"configId": "x"},
        {"configId": "c", "name": "n", "type": "select", "currentValue": "a", "options": []},
        {"configId": "c", "name": "n", "type": "boolean", "currentValue": "yes"},
    ]
)

# Wrong-typed values for default-on-error fields, by the declared JSON type.
wrong_for_string = st.sampled_from([42, True, [], {"a": 1}])
wrong_for_object = st.sampled_from(["x", 7, False, [1]])
wrong_for_array = st.sampled_from(["x", 7, {"a": 1}])
