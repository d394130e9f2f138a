#!/usr/bin/env node
// A deterministic ACP v2 test agent built on the official TypeScript SDK
// (`@agentclientprotocol/sdk` 2.4.0, entry point `experimental/v2`).
//
// acp_client's tests start it as a subprocess and talk newline-delimited
// JSON-RPC over stdin/stdout. Only ACP messages are written to stdout (except
// the deliberate non-JSON line of the "garbage" scenario); logs go to stderr.
//
// Start: `node tests/peers/v2_agent.mjs` (needs tests/peers/node_modules).
//
// Ids are deterministic: sessions are sess-1, sess-2, ... in creation order;
// inside a session the N-th accepted prompt uses msg-user-N, msg-agent-N,
// msg-thought-N, call-N, term-N and plan-N. The permission request offers the
// option ids "allow-once" and "reject-once".
//
// Prompt keywords (searched in the concatenated text blocks of the prompt):
//   echo-first  the `user_message` update is sent before the prompt response
//               (otherwise it follows the response)
//   permission  ask `session/request_permission` before running the tool
//   slow        wait 50 ms before every update and stream many more chunks
//   crash       exit abruptly (code 42) after a few updates
//   garbage     write one non-JSON line to stdout mid-turn, then continue
//   host-requests  ask the client the extension request `_editor/buffer`
//               ({sessionId, path: "README.md"}) and `elicitation/create` (a form
//               asking a string `name`), after the agent message's last chunk;
//               each answer is reported in an agent_message_chunk
//               ("buffer: <text>" / "buffer error: <code>", "elicitation:
//               <action> <name>" / "elicitation error: <code>")
//   subagent    before the turn, announce a child session <sess>-child-N on the
//               parent (`subagent_update`, title "Explorer", cancel allowed) and
//               stream the child's own updates on its sessionId: state running,
//               a `session_message` from the parent, agent_message, idle
//               end_turn; then the parent's mirror of the child's idle state
//
// v2 Preview behaviour (raw JSON where the 2.4.0 SDK lacks the shapes):
// a `session/resume` with replay re-announces each child, replays its history
// and ends it with `replay_complete` on the child, then `replay_complete` on
// the parent, then the current-state snapshot. A `session/prompt` whose
// `idempotencyKey` was seen before in the session inserts nothing: it is
// answered with the original `messageId` (the SDK strips the unknown field,
// so the agent reads it from the raw input line).
//
// A normal turn after the user message: state_update running; agent_message
// [Hello]; agent_message_chunk ", world"; agent_message [I will run the
// tests.] (replace); agent_message_chunk; 2 agent_thought_chunk; plan_update
// (pending); tool_call_update pending (title/kind); tool_call_update
// in_progress; 2 tool_call_content_chunk; a tool_call_content_chunk
// referencing term-N; terminal_update (command/cwd/size); 3
// terminal_output_chunk (UTF-8 split inside "🌍", colour escapes, "\r");
// terminal_update exitStatus {exitCode: 0}; tool_call_update completed with
// replacing content; plan_update (completed); usage_update with cost;
// `_acme_progress`; state_update idle end_turn.
// A prompt sent while a turn runs is held until it ends; session/cancel
// answers held prompts with -32800.
//
// With ACP_TEST_AGENT_STORE=<file>, sessions outlive the process, as a real agent's do:
// after each session/new and each turn the agent writes every session's id, cwd, prompt
// count and retained history there, and a new process reads them back on start, so an
// agent started again answers `session/resume` for them (with or without replay).
//
// Everything is sent through the SDK (`AgentContext.notify` / `request`),
// including `$/cancel_request` (via the SDK's `cancellationSignal` +
// `stopWaitingOnCancel` request options). The only hand-written output is the
// "garbage" line: the SDK serialises every message as JSON, so by design it
// cannot emit a line that is not JSON.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { Readable, Transform } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const STEP_DELAY_MS = 50;
const CRASH_EXIT_CODE = 42;
const GARBAGE_LINE = "this is not JSON {\n";
const FINAL_TOOL_STATUSES = new Set(["completed", "failed", "cancelled"]);

/** Bytes the display terminal prints: colour escapes, a multi-byte
 * character split across chunks, a carriage return. */
const TERMINAL_CHUNKS = (() => {
  const enc = new TextEncoder();
  const line1 = enc.encode("\x1b[32mhéllo 🌍\x1b[0m\r\n");
  // "\x1b[32m" is 5 bytes, "héllo " 7 bytes: the emoji (4 bytes) starts at 12.
  const cut = 12 + 2; // inside the emoji
  return [
    line1.slice(0, cut),
    line1.slice(cut),
    enc.encode("progress 50%\rprogress 100%\r\n"),
  ];
})();

const log = (...args) => console.error("[v2_agent]", ...args);

const toBase64 = (bytes) => Buffer.from(bytes).toString("base64");

/** Thrown inside a turn when the turn was cancelled. */
class TurnCancelled extends Error {}

function initialConfigOptions() {
  return [
    {
      type: "select",
      configId: "model",
      name: "Model",
      category: "model",
      currentValue: "fast",
      options: [
        { value: "fast", name: "Fast" },
        { value: "smart", name: "Smart" },
      ],
    },
    {
      type: "boolean",
      configId: "verbose",
      name: "Verbose output",
      currentValue: false,
    },
  ];
}

const AVAILABLE_COMMANDS = [
  {
    type: "command",
    name: "test",
    description: "Run the test suite",
    input: { type: "text", hint: "path to test" },
  },
  { type: "command", name: "plan", description: "Show the current plan" },
];

// ---------------------------------------------------------------------------
// Sessions and retained history (a tiny reducer used for replay)
// ---------------------------------------------------------------------------

let sessionCounter = 0;
/** @type {Map<string, Session>} */
const sessions = new Map();

class Session {
  constructor(id, cwd) {
    this.id = id;
    this.cwd = cwd;
    this.closed = false;
    this.promptCounter = 0;
    this.configOptions = initialConfigOptions();
    /** @type {Turn | null} */
    this.turn = null;
    /** Prompts held while a turn runs: {withdraw: () => void}. */
    this.held = new Set();
    // Retained history, in first-seen order.
    this.timeline = []; // keys "user:<id>", "agent:<id>", "thought:<id>", "tool:<id>"
    this.messages = new Map(); // key -> {kind, messageId, content}
    this.toolCalls = new Map(); // toolCallId -> fields
    this.terminals = new Map(); // terminalId -> {fields, chunks: Uint8Array[]}
    this.plans = new Map(); // planId -> plan content
    this.usage = null;
    this.children = []; // child Session objects, in announcement order
    this.keys = new Map(); // idempotencyKey -> messageId (Preview: insert at most once)
  }

  /** Applies an update to the retained history (used for replay). */
  retain(update) {
    const kind = update.sessionUpdate;
    const msgKinds = {
      user_message: "user",
      user_message_chunk: "user",
      agent_message: "agent",
      agent_message_chunk: "agent",
      agent_thought: "thought",
      agent_thought_chunk: "thought",
    };
    if (kind in msgKinds) {
      const key = `${msgKinds[kind]}:${update.messageId}`;
      let msg = this.messages.get(key);
      if (!msg) {
        msg = { kind: msgKinds[kind], messageId: update.messageId, content: [] };
        this.messages.set(key, msg);
        this.timeline.push(key);
      }
      if (kind.endsWith("_chunk")) msg.content.push(update.content);
      else if (update.content !== undefined) msg.content = [...(update.content ?? [])];
      return;
    }
    if (kind === "tool_call_update" || kind === "tool_call_content_chunk") {
      let tool = this.toolCalls.get(update.toolCallId);
      if (!tool) {
        tool = { toolCallId: update.toolCallId, content: [] };
        this.toolCalls.set(update.toolCallId, tool);
        this.timeline.push(`tool:${update.toolCallId}`);
      }
      if (kind === "tool_call_content_chunk") {
        tool.content.push(update.content);
      } else {
        for (const [field, value] of Object.entries(update)) {
          if (field !== "sessionUpdate") tool[field] = value;
        }
        if (tool.content === null) tool.content = [];
      }
      return;
    }
    if (kind === "terminal_update" || kind === "terminal_output_chunk") {
      let term = this.terminals.get(update.terminalId);
      if (!term) {
        term = { fields: {}, chunks: [] };
        this.terminals.set(update.terminalId, term);
      }
      if (kind === "terminal_output_chunk") {
        term.chunks.push(Buffer.from(update.data, "base64"));
      } else {
        for (const [field, value] of Object.entries(update)) {
          if (field === "output") {
            term.chunks = value === null ? [] : [Buffer.from(value.data, "base64")];
          } else if (field !== "sessionUpdate" && field !== "terminalId") {
            term.fields[field] = value;
          }
        }
      }
      return;
    }
    if (kind === "plan_update") {
      this.plans.set(update.plan.planId, update.plan);
      return;
    }
    if (kind === "usage_update") {
      this.usage = update;
    }
    if (kind === "session_message") {
      const key = `smsg:${update.messageId}`;
      if (!this.messages.has(key)) this.timeline.push(key);
      this.messages.set(key, { kind: "smsg", update });
    }
    // state_update, custom updates: live only.
  }

  /** Retained history as replay updates: messages as whole updates, the
   * agent message as a reset (`content: []`) followed by chunks. */
  replayUpdates() {
    const out = [];
    for (const key of this.timeline) {
      if (key.startsWith("tool:")) {
        const tool = this.toolCalls.get(key.slice(5));
        out.push({ sessionUpdate: "tool_call_update", ...tool });
        continue;
      }
      const msg = this.messages.get(key);
      if (msg.kind === "smsg") {
        out.push(msg.update);
      } else if (msg.kind === "agent") {
        out.push({ sessionUpdate: "agent_message", messageId: msg.messageId, content: [] });
        for (const block of msg.content) {
          out.push({ sessionUpdate: "agent_message_chunk", messageId: msg.messageId, content: block });
        }
      } else {
        const sessionUpdate = msg.kind === "user" ? "user_message" : "agent_thought";
        out.push({ sessionUpdate, messageId: msg.messageId, content: msg.content });
      }
    }
    for (const [terminalId, term] of this.terminals) {
      out.push({
        sessionUpdate: "terminal_update",
        terminalId,
        ...term.fields,
        output: { data: toBase64(Buffer.concat(term.chunks)) },
      });
    }
    for (const plan of this.plans.values()) {
      out.push({ sessionUpdate: "plan_update", plan });
    }
    if (this.usage) out.push(this.usage);
    return out;
  }
}

const STORE = process.env.ACP_TEST_AGENT_STORE || null;

/** Writes the sessions to the store (ACP_TEST_AGENT_STORE), if there is one. */
function saveSessions() {
  if (STORE === null) return;
  const saved = [...sessions.values()].map((session) => ({
    id: session.id,
    cwd: session.cwd,
    promptCounter: session.promptCounter,
    history: session.replayUpdates(),
  }));
  writeFileSync(STORE, JSON.stringify({ sessionCounter, sessions: saved }));
}

/** Reads the sessions an earlier process stored back, if any. */
function loadSessions() {
  if (STORE === null || !existsSync(STORE)) return;
  const data = JSON.parse(readFileSync(STORE, "utf8"));
  sessionCounter = data.sessionCounter;
  for (const item of data.sessions) {
    const session = new Session(item.id, item.cwd);
    session.promptCounter = item.promptCounter;
    for (const update of item.history) session.retain(update);
    sessions.set(session.id, session);
  }
  log("restored", data.sessions.length, "session(s) from", STORE);
}

loadSessions();

/** One prompt's foreground work. */
class Turn {
  constructor(n) {
    this.n = n;
    this.cancelled = false;
    this.abort = new AbortController();
    this.toolCallIds = [];
    /** Resolves when the turn has reported idle. */
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  cancel() {
    if (this.cancelled) return;
    this.cancelled = true;
    this.abort.abort(new TurnCancelled("session/cancel"));
  }
}

function getSession(sessionId) {
  const session = sessions.get(sessionId);
  if (!session || session.closed) throw acp.RequestError.sessionNotFound(sessionId);
  return session;
}

function promptText(prompt) {
  return prompt
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

// ---------------------------------------------------------------------------
// Sending
// ---------------------------------------------------------------------------

/** Sends one session/update through the SDK and retains it. */
async function emit(client, session, update) {
  session.retain(update);
  await client.notify(acp.methods.client.session.update, {
    sessionId: session.id,
    update,
  });
}

/** Sleeps, waking early (with TurnCancelled) when the turn is cancelled. */
function pause(turn, ms) {
  return new Promise((resolve, reject) => {
    if (turn.cancelled) {
      reject(new TurnCancelled());
      return;
    }
    const timer = setTimeout(() => {
      turn.abort.signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new TurnCancelled());
    };
    turn.abort.signal.addEventListener("abort", onAbort, { once: true });
  });
}

// ---------------------------------------------------------------------------
// The turn
// ---------------------------------------------------------------------------

/** The "subagent" keyword: a child announced on the parent, then its own traffic. */
async function runChild(client, session, n) {
  const child = new Session(`${session.id}-child-${n}`, session.cwd);
  session.children.push(child);
  sessions.set(child.id, child);
  const text_ = (t) => ({ type: "text", text: t });
  await emit(client, session, {
    sessionUpdate: "subagent_update",
    sessionId: child.id,
    title: "Explorer",
    capabilities: { cancel: {} },
  });
  await emit(client, child, { sessionUpdate: "state_update", state: "running" });
  await emit(client, child, {
    sessionUpdate: "session_message",
    messageId: `sm-${n}`,
    senderSessionId: session.id,
    recipientSessionId: child.id,
    content: [text_("Look around the repository")],
  });
  await emit(client, child, {
    sessionUpdate: "agent_message",
    messageId: `msg-child-${n}`,
    content: [text_("Found 3 test files")],
  });
  await emit(client, child, { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
  await emit(client, session, {
    sessionUpdate: "subagent_update",
    sessionId: child.id,
    state: { state: "idle", stopReason: "end_turn" },
  });
}

async function runTurn(client, session, turn, text) {
  const n = turn.n;
  const slow = text.includes("slow");
  const ids = {
    agent: `msg-agent-${n}`,
    thought: `msg-thought-${n}`,
    call: `call-${n}`,
    term: `term-${n}`,
    plan: `plan-${n}`,
  };
  /** Sends one update of the turn, honouring cancellation and "slow". */
  const step = async (update) => {
    if (slow) await pause(turn, STEP_DELAY_MS);
    if (turn.cancelled) throw new TurnCancelled();
    if (update.sessionUpdate === "tool_call_update" && !turn.toolCallIds.includes(update.toolCallId)) {
      turn.toolCallIds.push(update.toolCallId);
    }
    await emit(client, session, update);
  };
  const text_ = (t) => ({ type: "text", text: t });
  const planEntries = (status) => [
    { content: "Read the failing test", priority: "high", status },
    { content: "Run the test suite", priority: "medium", status },
    { content: "Report the result", priority: "low", status },
  ];

  await step({ sessionUpdate: "state_update", state: "running" });
  if (text.includes("subagent")) await runChild(client, session, n);

  // Agent message: whole [A], chunk B (append), whole [C] (replace), chunk D.
  await step({ sessionUpdate: "agent_message", messageId: ids.agent, content: [text_("Hello")] });
  await step({ sessionUpdate: "agent_message_chunk", messageId: ids.agent, content: text_(", world") });

  if (text.includes("crash")) {
    log("crash requested: exiting with code", CRASH_EXIT_CODE);
    process.exit(CRASH_EXIT_CODE);
  }
  if (text.includes("garbage")) {
    // Hand-written on purpose: the SDK can only emit JSON. All earlier
    // messages were fully written (each `emit` awaits the SDK's write).
    log("garbage requested: writing a non-JSON line");
    process.stdout.write(GARBAGE_LINE);
  }

  await step({
    sessionUpdate: "agent_message",
    messageId: ids.agent,
    content: [text_("I will run the tests.")],
  });
  const extraChunks = slow ? 20 : 1;
  for (let i = 0; i < extraChunks; i++) {
    await step({
      sessionUpdate: "agent_message_chunk",
      messageId: ids.agent,
      content: text_(slow ? ` chunk ${i + 1}.` : " Starting now."),
    });
  }

  if (text.includes("host-requests")) {
    let said;
    try {
      const buffer = await client.request("_editor/buffer", { sessionId: session.id, path: "README.md" });
      said = `buffer: ${buffer.text}`;
    } catch (error) {
      said = `buffer error: ${error.code}`;
    }
    await step({ sessionUpdate: "agent_message_chunk", messageId: ids.agent, content: text_(` ${said}`) });
    try {
      const answer = await client.request(acp.methods.client.elicitation.create, {
        sessionId: session.id,
        mode: "form",
        message: "Who are you?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      });
      said = `elicitation: ${answer.action} ${answer.content?.name ?? "-"}`;
    } catch (error) {
      said = `elicitation error: ${error.code}`;
    }
    await step({ sessionUpdate: "agent_message_chunk", messageId: ids.agent, content: text_(` ${said}`) });
  }

  await step({ sessionUpdate: "agent_thought_chunk", messageId: ids.thought, content: text_("The user wants") });
  await step({ sessionUpdate: "agent_thought_chunk", messageId: ids.thought, content: text_(" the tests run.") });

  await step({ sessionUpdate: "plan_update", plan: { type: "items", planId: ids.plan, entries: planEntries("pending") } });

  // Tool call.
  await step({
    sessionUpdate: "tool_call_update",
    toolCallId: ids.call,
    title: "Run the test suite",
    kind: "execute",
    status: "pending",
    rawInput: { command: "pytest -q" },
  });

  let toolAllowed = true;
  if (text.includes("permission")) {
    await step({ sessionUpdate: "state_update", state: "requires_action" });
    let response;
    try {
      response = await client.request(
        acp.methods.client.session.requestPermission,
        {
          sessionId: session.id,
          title: "Allow running the test suite?",
          subject: {
            type: "tool_call",
            toolCall: { toolCallId: ids.call, title: "Run the test suite", kind: "execute", status: "pending" },
          },
          options: [
            { optionId: "allow-once", name: "Allow", kind: "allow_once" },
            { optionId: "reject-once", name: "Reject", kind: "reject_once" },
          ],
        },
        // Aborting this signal (on session/cancel or session/close) makes the
        // SDK send `$/cancel_request` and stop waiting for the answer.
        { cancellationSignal: turn.abort.signal, stopWaitingOnCancel: true },
      );
    } catch (error) {
      if (turn.cancelled) throw new TurnCancelled();
      throw error;
    }
    const outcome = response.outcome;
    log("permission outcome", JSON.stringify(outcome));
    if (outcome.outcome === "selected" && outcome.optionId === "allow-once") {
      await step({ sessionUpdate: "state_update", state: "running" });
    } else if (outcome.outcome === "selected") {
      toolAllowed = false;
      await step({ sessionUpdate: "state_update", state: "running" });
      await step({
        sessionUpdate: "tool_call_update",
        toolCallId: ids.call,
        status: "failed",
        content: [{ type: "content", content: text_("Permission denied by the user.") }],
      });
    } else {
      // `cancelled` (or a custom outcome): not approved; stop the work.
      turn.cancelled = true;
      throw new TurnCancelled();
    }
  }

  if (toolAllowed) {
    await step({ sessionUpdate: "tool_call_update", toolCallId: ids.call, status: "in_progress" });
    const toolChunks = slow ? 100 : 2;
    for (let i = 0; i < toolChunks; i++) {
      await step({
        sessionUpdate: "tool_call_content_chunk",
        toolCallId: ids.call,
        content: { type: "content", content: text_(`collected ${i + 1} tests\n`) },
      });
    }
    // Display-only terminal referenced from the tool call.
    await step({
      sessionUpdate: "tool_call_content_chunk",
      toolCallId: ids.call,
      content: { type: "terminal", terminalId: ids.term },
    });
    await step({
      sessionUpdate: "terminal_update",
      terminalId: ids.term,
      command: "pytest -q",
      cwd: session.cwd,
      size: { cols: 80, rows: 24 },
    });
    for (const chunk of TERMINAL_CHUNKS) {
      await step({ sessionUpdate: "terminal_output_chunk", terminalId: ids.term, data: toBase64(chunk) });
    }
    await step({ sessionUpdate: "terminal_update", terminalId: ids.term, exitStatus: { exitCode: 0 } });
    await step({
      sessionUpdate: "tool_call_update",
      toolCallId: ids.call,
      status: "completed",
      content: [
        { type: "content", content: text_("All tests passed.") },
        { type: "terminal", terminalId: ids.term },
      ],
      rawOutput: { exitCode: 0 },
    });
  }

  await step({
    sessionUpdate: "plan_update",
    plan: { type: "items", planId: ids.plan, entries: planEntries("completed") },
  });
  await step({
    sessionUpdate: "usage_update",
    used: 1200 * n,
    size: 200000,
    cost: { amount: 0.01 * n, currency: "USD" },
  });
  await step({ sessionUpdate: "_acme_progress", percent: 100, label: "done" });
  await step({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
}

/** Runs a turn and turns cancellation into `cancelled` updates + idle. */
async function driveTurn(client, session, turn, text) {
  try {
    await runTurn(client, session, turn, text);
  } catch (error) {
    if (!(error instanceof TurnCancelled) && !turn.cancelled) {
      log("turn failed:", error);
      await emit(client, session, { sessionUpdate: "state_update", state: "idle", stopReason: "_failed" }).catch(() => {});
      return;
    }
    log(`turn ${turn.n} cancelled`);
    for (const toolCallId of turn.toolCallIds) {
      const status = session.toolCalls.get(toolCallId)?.status;
      if (!FINAL_TOOL_STATUSES.has(status)) {
        await emit(client, session, { sessionUpdate: "tool_call_update", toolCallId, status: "cancelled" });
      }
    }
    await emit(client, session, { sessionUpdate: "state_update", state: "idle", stopReason: "cancelled" });
  } finally {
    if (session.turn === turn) session.turn = null;
    saveSessions();
    turn.finish();
  }
}

/** Cancels the session's foreground work and withdraws held prompts. */
function cancelSession(session) {
  for (const held of [...session.held]) held.withdraw();
  session.turn?.cancel();
}

// ---------------------------------------------------------------------------
// The app
// ---------------------------------------------------------------------------

const app = acp
  .agent({ name: "acp-client-test-v2-agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    log("initialize, client protocolVersion", params.protocolVersion);
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "acp-client-test-v2-agent", title: "Test agent (v2)", version: "1.0.0" },
      capabilities: { session: { prompt: {} } },
      authMethods: [],
    };
  })
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    sessionCounter += 1;
    const session = new Session(`sess-${sessionCounter}`, params.cwd);
    sessions.set(session.id, session);
    saveSessions();
    log("session/new", session.id);
    return {
      sessionId: session.id,
      configOptions: session.configOptions,
      availableCommands: AVAILABLE_COMMANDS,
    };
  })
  .onRequest(acp.methods.agent.session.resume, async ({ params, client }) => {
    const session = sessions.get(params.sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
    const replayFrom = params.replayFrom ?? null;
    if (replayFrom !== null && replayFrom.type !== "start") {
      throw acp.RequestError.invalidParams({ replayFrom }, "unsupported replay cursor");
    }
    session.closed = false;
    session.cwd = params.cwd;
    const send = (sessionId, update) =>
      client.notify(acp.methods.client.session.update, { sessionId, update });
    if (replayFrom !== null) {
      for (const update of session.replayUpdates()) await send(session.id, update);
      for (const child of session.children) {
        // Preview: a live child is announced again, replays, and gets its own marker
        await send(session.id, { sessionUpdate: "subagent_update", sessionId: child.id, title: "Explorer" });
        for (const update of child.replayUpdates()) await send(child.id, update);
        await send(child.id, { sessionUpdate: "replay_complete" });
      }
      await send(session.id, { sessionUpdate: "replay_complete" });
    }
    const snapshot = session.turn
      ? { sessionUpdate: "state_update", state: "running" }
      : { sessionUpdate: "state_update", state: "idle" };
    await client.notify(acp.methods.client.session.update, { sessionId: session.id, update: snapshot });
    log("session/resume", session.id, replayFrom ? "with replay" : "without replay");
    return { configOptions: session.configOptions, availableCommands: AVAILABLE_COMMANDS };
  })
  .onRequest(acp.methods.agent.session.close, async ({ params }) => {
    const session = getSession(params.sessionId);
    const turn = session.turn;
    cancelSession(session);
    if (turn) await turn.done; // idle + cancelled is sent before the response
    session.closed = true;
    log("session/close", session.id);
    return {};
  })
  .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => {
    const session = getSession(params.sessionId);
    const option = session.configOptions.find((o) => o.configId === params.configId);
    if (!option) throw acp.RequestError.invalidParams({ configId: params.configId }, "unknown config option");
    if (option.type === "select") {
      if (params.type !== "id" || !option.options.some((o) => o.value === params.value)) {
        throw acp.RequestError.invalidParams({ value: params.value }, "unknown value");
      }
    } else if (params.type !== "boolean") {
      throw acp.RequestError.invalidParams({ type: params.type }, "expected a boolean value");
    }
    option.currentValue = params.value;
    return { configOptions: session.configOptions };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const session = getSession(params.sessionId);
    const key = takeKey(params);
    if (key !== null && session.keys.has(key)) {
      log(`session/prompt ${session.id}: a retry under key ${key}`);
      return { messageId: session.keys.get(key) }; // inserted at most once
    }
    // Hold the prompt while another turn runs; session/cancel withdraws it.
    while (session.turn) {
      let withdraw;
      const withdrawn = new Promise((resolve) => {
        withdraw = () => resolve(true);
      });
      const held = { withdraw };
      session.held.add(held);
      const wasWithdrawn = await Promise.race([session.turn.done.then(() => false), withdrawn]);
      session.held.delete(held);
      if (wasWithdrawn) throw acp.RequestError.requestCancelled(undefined, "prompt withdrawn");
      if (session.closed) throw acp.RequestError.sessionNotFound(session.id);
    }
    session.promptCounter += 1;
    const turn = new Turn(session.promptCounter);
    session.turn = turn;
    const messageId = `msg-user-${turn.n}`;
    if (key !== null) session.keys.set(key, messageId);
    const text = promptText(params.prompt);
    const userMessage = { sessionUpdate: "user_message", messageId, content: params.prompt };
    log(`session/prompt ${session.id} -> ${messageId}: ${JSON.stringify(text)}`);
    if (text.includes("echo-first")) {
      await emit(client, session, userMessage);
      setTimeout(() => void driveTurn(client, session, turn, text), 0);
    } else {
      // The SDK queues the response while this handler's promise settles
      // (microtasks only); a timer callback runs afterwards, so the user
      // message and the turn follow the response on the wire.
      setTimeout(() => {
        void emit(client, session, userMessage).then(() => driveTurn(client, session, turn, text));
      }, 0);
    }
    return { messageId };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    // The SDK dispatches each inbound message without waiting for earlier
    // handlers, so a prompt received just before this notification may not
    // have reached its handler yet. Acting after a timer tick lets such a
    // prompt register as held first, so that the cancel withdraws it.
    setTimeout(() => {
      const session = sessions.get(params.sessionId);
      log("session/cancel", params.sessionId, session?.turn ? `(turn ${session.turn.n})` : "(idle)");
      if (session) cancelSession(session);
    }, 0);
  });

const output = new WritableStream({
  write(chunk) {
    return new Promise((resolve, reject) => {
      process.stdout.write(chunk, (error) => (error ? reject(error) : resolve()));
    });
  },
});
// The SDK's schema (2.4.0) strips `idempotencyKey` from the params it hands over,
// so the raw lines are read on their way in: each keyed prompt's key is queued
// under its session and prompt, for the handler to take.
const promptKeys = [];
function takeKey(params) {
  const prompt = promptText(params.prompt); // the SDK's parse reorders keys: compare the text
  const at = promptKeys.findIndex((k) => k.sessionId === params.sessionId && k.prompt === prompt);
  if (at < 0) return null;
  return promptKeys.splice(at, 1)[0].key;
}
let pendingText = "";
const tap = new Transform({
  transform(chunk, _encoding, callback) {
    pendingText += chunk.toString("utf8");
    const lines = pendingText.split("\n");
    pendingText = lines.pop();
    for (const line of lines) {
      try {
        const message = JSON.parse(line);
        const params = message?.params;
        if (message?.method === "session/prompt" && typeof params?.idempotencyKey === "string") {
          promptKeys.push({
            sessionId: params.sessionId,
            prompt: promptText(params.prompt),
            key: params.idempotencyKey,
          });
        }
      } catch {
        // not JSON: the SDK reports it
      }
    }
    callback(null, chunk);
  },
});
const input = Readable.toWeb(process.stdin.pipe(tap));
const connection = app.connect(acp.ndJsonStream(output, input));
connection.closed.then(() => {
  log("connection closed");
  process.exit(0);
});
