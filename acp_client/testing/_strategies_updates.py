"""Hypothesis strategies for single `session/update` payloads, valid or leniently damaged.

Private helpers of :mod:`acp_client.testing.strategies`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from .._schema import TOOL_KINDS
from ._model_state import UPDATE_KINDS
from ._strategies_content import (
    _CONFIG_ID,
    _NAME,
    absolute_paths,
    any_blocks,
    background_items,
    base64_data,
    commands,
    config_options,
    custom_names,
    invalid_blocks,
    invalid_commands,
    invalid_config_options,
    invalid_locations,
    invalid_plan_entries,
    invalid_tool_contents,
    json_values,
    locations,
    metas,
    plan_entries,
    tool_call_contents,
    wrong_for_array,
    wrong_for_object,
    wrong_for_string,
)

Update = dict[str, Any]


CUSTOM_UPDATE = "custom"
"""Pseudo-kind for :func:`updates`: a custom ``_x`` or future (unknown) variant."""

message_ids = st.sampled_from(["m1", "m2", "m3"])
tool_call_ids = st.sampled_from(["c1", "c2"])
terminal_ids = st.sampled_from(["t1", "t2"])
plan_ids = st.sampled_from(["p1", "p2"])
compaction_ids = st.sampled_from(["k1", "k2"])


def _nullable(s: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), s)


def _update(
    variant: str, required: dict[str, Any], /, **optional: Any
) -> st.SearchStrategy[Update]:
    return st.fixed_dictionaries({"sessionUpdate": st.just(variant), **required}, optional=optional)


def _chunk(kind: str) -> st.SearchStrategy[Update]:
    return _update(kind, {"messageId": message_ids, "content": any_blocks}, _meta=_nullable(metas))


def _whole(kind: str) -> st.SearchStrategy[Update]:
    return _update(
        kind,
        {"messageId": message_ids},
        content=_nullable(st.lists(any_blocks, max_size=3)),
        _meta=_nullable(metas),
    )


_STOP_REASONS = ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
_error_objects = st.fixed_dictionaries(
    {"code": st.sampled_from([-32603, -32000, 5]), "message": st.text(max_size=10)}
)
_background = st.lists(background_items, max_size=3)

state_updates = st.one_of(
    _update(
        "state_update",
        {"state": st.sampled_from(["running", "requires_action"])},
        background=_nullable(_background),
        _meta=_nullable(metas),
    ),
    _update(
        "state_update",
        {"state": st.just("idle")},
        stopReason=_nullable(st.sampled_from([*_STOP_REASONS, "_acme_quota"])),
        background=_nullable(_background),
        _meta=_nullable(metas),
    ),
    _update(
        "state_update",
        {"state": st.just("idle"), "stopReason": st.just("error")},
        error=_nullable(_error_objects),
    ),
    _update("state_update", {"state": custom_names}, detail=json_values),
)

_tool_kinds = st.sampled_from([*TOOL_KINDS, "_x"])
_tool_statuses = st.sampled_from(
    ["pending", "in_progress", "paused", "completed", "failed", "cancelled", "_acme_waiting"]
)
_capabilities: st.SearchStrategy[dict[str, Any]] = st.one_of(st.just({}), st.just({"cancel": {}}))

tool_call_updates = _update(
    "tool_call_update",
    {"toolCallId": tool_call_ids},
    title=_nullable(st.text(max_size=10)),
    name=_nullable(st.text(max_size=6)),
    kind=_nullable(_tool_kinds),
    status=_nullable(_tool_statuses),
    content=_nullable(st.lists(tool_call_contents(terminal_ids), max_size=3)),
    locations=_nullable(st.lists(locations, max_size=2)),
    rawInput=json_values,
    rawOutput=json_values,
    capabilities=_nullable(_capabilities),
    _meta=_nullable(metas),
)

terminal_updates = _update(
    "terminal_update",
    {"terminalId": terminal_ids},
    command=_nullable(st.text(max_size=10)),
    cwd=_nullable(absolute_paths),
    output=_nullable(st.fixed_dictionaries({"data": base64_data})),
    exitStatus=_nullable(
        st.fixed_dictionaries(
            {},
            optional={
                "exitCode": _nullable(st.integers(-(2**31), 2**31 - 1)),
                "signal": _nullable(st.sampled_from(["SIGTERM", "SIGKILL"])),
            },
        )
    ),
    size=_nullable(
        st.fixed_dictionaries({"cols": st.integers(1, 65535), "rows": st.integers(1, 65535)})
    ),
    capabilities=_nullable(_capabilities),
    _meta=_nullable(metas),
)

plan_updates = _update(
    "plan_update",
    {
        "plan": st.one_of(
            st.fixed_dictionaries(
                {
                    "type": st.just("items"),
                    "planId": plan_ids,
                    "entries": st.lists(plan_entries, max_size=3),
                },
                optional={"_meta": metas},
            ),
            st.fixed_dictionaries(
                {
                    "type": st.one_of(custom_names, st.just("markdown")),
                    "planId": plan_ids,
                    "content": st.text(max_size=10),
                }
            ),
        )
    },
    _meta=_nullable(metas),
)

_costs = st.fixed_dictionaries(
    {
        "amount": st.floats(min_value=0, max_value=1e6, allow_nan=False),
        "currency": st.sampled_from(["USD", "EUR", "credits"]),
    }
)

custom_updates = st.builds(
    lambda kind, extra: {**extra, "sessionUpdate": kind},
    st.one_of(custom_names, st.sampled_from(["foo_update", "bar_update", "plan", "tool_call"])),
    st.dictionaries(st.sampled_from(["a", "b", "messageId"]), json_values, max_size=2),
)

_VALID: dict[str, st.SearchStrategy[Update]] = {
    "user_message_chunk": _chunk("user_message_chunk"),
    "user_message": _whole("user_message"),
    "agent_message_chunk": _chunk("agent_message_chunk"),
    "agent_message": _whole("agent_message"),
    "agent_thought_chunk": _chunk("agent_thought_chunk"),
    "agent_thought": _whole("agent_thought"),
    "state_update": state_updates,
    "tool_call_content_chunk": _update(
        "tool_call_content_chunk",
        {"toolCallId": tool_call_ids, "content": tool_call_contents(terminal_ids)},
        _meta=_nullable(metas),
    ),
    "tool_call_update": tool_call_updates,
    "terminal_update": terminal_updates,
    "terminal_output_chunk": _update(
        "terminal_output_chunk",
        {"terminalId": terminal_ids, "data": base64_data},
        _meta=_nullable(metas),
    ),
    "plan_update": plan_updates,
    "available_commands_update": _update(
        "available_commands_update",
        {"availableCommands": st.lists(commands, max_size=3, unique_by=_NAME)},
        _meta=_nullable(metas),
    ),
    "config_option_update": _update(
        "config_option_update",
        {"configOptions": st.lists(config_options(), max_size=3, unique_by=_CONFIG_ID)},
        _meta=_nullable(metas),
    ),
    "session_info_update": _update(
        "session_info_update",
        {},
        title=_nullable(st.text(max_size=10)),
        updatedAt=_nullable(st.just("2025-06-01T12:00:00Z")),
        _meta=_nullable(metas),
    ),
    "usage_update": _update(
        "usage_update",
        {"used": st.integers(0, 2**40), "size": st.integers(0, 2**40)},
        cost=_nullable(_costs),
        _meta=_nullable(metas),
    ),
    "notice": _update(
        "notice",
        {
            "severity": st.sampled_from(["info", "warning", "error", "_acme"]),
            "title": st.text(min_size=1, max_size=12),
        },
        description=_nullable(st.text(max_size=12)),
        _meta=_nullable(metas),
    ),
    "compaction_update": _update(
        "compaction_update",
        {
            "compactionId": compaction_ids,
            "status": st.sampled_from(["in_progress", "completed", "failed", "cancelled", "_x"]),
        },
        summary=_nullable(st.lists(any_blocks, max_size=2)),
        error=_nullable(st.text(max_size=8)),
        _meta=_nullable(metas),
    ),
    "compaction_summary_chunk": _update(
        "compaction_summary_chunk",
        {"compactionId": compaction_ids, "content": any_blocks},
        _meta=_nullable(metas),
    ),
    CUSTOM_UPDATE: custom_updates,
}

# -- damage (spec 13.5) -------------------------------------------------------------------
# For each kind: default-on-error fields by declared type, and arrays whose invalid items
# are skipped. The clean counterpart of a damaged update is what lenient decoding reads:
# a wrong-typed D field is omitted, invalid S items are gone.

_D_STRING: dict[str, tuple[str, ...]] = {
    "tool_call_update": ("title", "name", "kind", "status"),
    "terminal_update": ("command", "cwd"),
    "session_info_update": ("title", "updatedAt"),
    "notice": ("description",),
    "compaction_update": ("error",),
}
_D_OBJECT: dict[str, tuple[str, ...]] = {
    "tool_call_update": ("capabilities",),
    "terminal_update": ("output", "exitStatus", "size", "capabilities"),
    "usage_update": ("cost",),
}
_D_S_ARRAY: dict[str, tuple[tuple[str, Any], ...]] = {
    "user_message": (("content", invalid_blocks),),
    "agent_message": (("content", invalid_blocks),),
    "agent_thought": (("content", invalid_blocks),),
    "tool_call_update": (("content", invalid_tool_contents), ("locations", invalid_locations)),
    "compaction_update": (("summary", invalid_blocks),),
}
_S_ARRAY: dict[str, tuple[str, Any]] = {
    "available_commands_update": ("availableCommands", invalid_commands),
    "config_option_update": ("configOptions", invalid_config_options),
}
_malformed_nested = {
    "size": st.just({"cols": 0, "rows": 40}),
    "cost": st.just({"amount": "x", "currency": "USD"}),
}


def _insert_invalid(draw: st.DrawFn, items: list[Any], invalid: Any) -> list[Any]:
    out = list(items)
    for bad in draw(st.lists(invalid, min_size=1, max_size=2)):
        out.insert(draw(st.integers(0, len(out))), bad)
    return out


@st.composite
def _damage(draw: st.DrawFn, update: Update) -> tuple[Update, Update]:
    kind = update["sessionUpdate"]
    damaged = copy.deepcopy(update)
    clean = copy.deepcopy(update)
    ops: list[tuple[str, str, Any]] = []
    is_known_state = kind == "state_update" and update["state"] in (
        "running",
        "idle",
        "requires_action",
    )
    if kind in UPDATE_KINDS and (kind != "state_update" or is_known_state):
        ops.append(("wrong", "_meta", wrong_for_object))
    ops += [("wrong", f, wrong_for_string) for f in _D_STRING.get(kind, ())]
    ops += [
        ("wrong", f, st.one_of(wrong_for_object, _malformed_nested.get(f, wrong_for_object)))
        for f in _D_OBJECT.get(kind, ())
    ]
    for f, invalid in _D_S_ARRAY.get(kind, ()):
        ops.append(("wrong", f, wrong_for_array))
        if isinstance(update.get(f), list):
            ops.append(("items", f, invalid))
    if kind in _S_ARRAY:
        f, invalid = _S_ARRAY[kind]
        ops.append(("items", f, invalid))
    if is_known_state:
        # `background` is D without per-item skipping: any invalid item spoils the list.
        spoiled = st.one_of(wrong_for_array, st.lists(background_items).map(lambda b: [*b, {}]))
        ops.append(("wrong", "background", spoiled))
        if update["state"] == "idle":
            ops.append(("wrong", "stopReason", wrong_for_string))
            if update.get("stopReason") == "error":
                ops.append(("wrong", "error", st.one_of(wrong_for_object, st.just({"code": 1}))))
    if kind == "plan_update" and update["plan"]["type"] == "items":
        ops.append(("plan-entries", "plan.entries", invalid_plan_entries))
        ops.append(("plan-meta", "plan._meta", wrong_for_object))
    if not ops:
        return damaged, clean
    chosen = draw(st.lists(st.sampled_from(ops), min_size=1, max_size=3, unique_by=lambda o: o[1]))
    if any(f == "stopReason" for _, f, _v in chosen):
        # Without a readable stop reason, `error` is a raw extra field, not decoded.
        chosen = [op for op in chosen if op[1] != "error"]
    for op, f, values in chosen:
        if op == "wrong":
            damaged[f] = draw(values)
            clean.pop(f, None)
        elif op == "items":
            damaged[f] = _insert_invalid(draw, update[f], values)
        elif op == "plan-entries":
            damaged["plan"]["entries"] = _insert_invalid(draw, update["plan"]["entries"], values)
        else:  # plan-meta
            damaged["plan"]["_meta"] = draw(values)
            clean["plan"].pop("_meta", None)
    return damaged, clean


def _check_kinds(kinds: Sequence[str] | None) -> list[str]:
    if kinds is None:
        return [*UPDATE_KINDS, CUSTOM_UPDATE]
    if isinstance(kinds, str) or not isinstance(kinds, Sequence) or not kinds:
        raise InvalidArgument(f"kinds must be a non-empty sequence of update kinds, not {kinds!r}")
    bad = [k for k in kinds if k not in _VALID]
    if bad:
        raise InvalidArgument(
            f"unknown update kinds {bad}; use names from UPDATE_KINDS or {CUSTOM_UPDATE!r}"
        )
    return list(kinds)


def updates(
    kinds: Sequence[str] | None = None, *, damaged: bool = False
) -> st.SearchStrategy[Update]:
    """``session/update`` payloads (the ``update`` object), one variant per draw.

    ``kinds`` restricts the variants, from ``UPDATE_KINDS`` plus ``"custom"`` (a custom
    ``_x`` or future variant a client keeps raw); default: all of them. Ids come from
    small pools (``m1``-``m3``, ``c1``/``c2``, ``t1``/``t2`` ...) so that draws collide on
    keys. Valid updates validate against the v2 schema. With ``damaged=True`` each draw
    carries lenient-decoding damage where the schema allows it (wrong-typed
    default-on-error fields, invalid items in skip-invalid-items arrays); a variant with
    no such field (a custom one, a ``state_update`` with a custom state) comes undamaged.
    Use :func:`damaged_update_pairs` to also get what a lenient decoder reads.

    Example::

        @given(updates(["tool_call_update"]))
        def test_tool_calls(update):
            assert update["sessionUpdate"] == "tool_call_update"

        # {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": None}
    """
    chosen = _check_kinds(kinds)
    if not isinstance(damaged, bool):
        raise InvalidArgument(f"damaged must be a bool, not {damaged!r}")
    valid = st.one_of([_VALID[k] for k in chosen])
    if not damaged:
        return valid
    return valid.flatmap(_damage).map(lambda pair: pair[0])


def damaged_update_pairs(
    kinds: Sequence[str] | None = None,
) -> st.SearchStrategy[tuple[Update, Update]]:
    """``(damaged, clean)`` update pairs: ``clean`` is what lenient decoding reads.

    ``damaged`` has one to three damages that the schema's default-on-error (D) and
    skip-invalid-items (S) annotations allow; ``clean`` is the same update with each
    wrong-typed D field removed (omitted) and the invalid S items left out. A client
    must reconcile both to the same state. Kinds without any D or S field give
    ``(update, update)``. ``clean`` validates against the v2 schema.

    Example::

        @given(damaged_update_pairs(["usage_update"]))
        def test_lenient(pair):
            damaged, clean = pair  # damaged["cost"] == "x"; "cost" not in clean
    """
    chosen = _check_kinds(kinds)
    return st.one_of([_VALID[k] for k in chosen]).flatmap(_damage)
