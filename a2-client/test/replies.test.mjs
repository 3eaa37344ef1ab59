import { test } from "node:test";
import assert from "node:assert/strict";
import { createReplies, replies } from "../src/client.js";
import { client, history, message, NO_SERVER, RESTART, restartServer, SERVER, sessionId, until } from "./support.mjs";

// Drawing AI replies (docs/ai-replies.md): the sample's assistant answers a message that mentions @assistant
// with its offline model, a word per 20 ms in ClientLibraryIntegrationTests, and asks for the order_pizza tool,
// which waits for a person's approval, when the message mentions a pizza.

let indexes = 100;
/** A stored event as the stream delivers it. */
function stored(type, payload) {
  return { index: ++indexes, id: "e-" + indexes, type, payload, createdAt: "2026-01-01T00:00:00Z", cause: null };
}

/** The turn the server's own fold (the ai.conversation reducer, what the model is sent) holds for a reply. */
async function storedReply(room, replyTo) {
  const response = await fetch(SERVER + "/a2/chat/sessions/" + encodeURIComponent(room) + "/state/ai.conversation");
  assert.equal(response.status, 200, "the state of ai.conversation");
  const turn = (await response.json()).state.turns.find((t) => t.replyTo === replyTo);
  return turn && { attempt: turn.attempt, end: turn.end,
    text: turn.entries.filter((e) => e.role === "assistant").map((e) => e.text).join("") };
}

test("after a takeover the reply is the new attempt's text: an old attempt's late delta and its second end change nothing", () => {
  const asked = ++indexes;
  const events = [
    stored("message.sent", { text: "@assistant what is A2?", author: "ann", thread: "ann" }),
    stored("reply.delta", { replyTo: asked, step: 0, attempt: 1, text: "The first attempt " }),
    stored("reply.delta", { replyTo: asked, step: 0, attempt: 1, text: "was cut " }),
    // attempt 2 took the run over (attempt 1's instance stalled), and claims the reply before it asks the model
    stored("reply.restarted", { replyTo: asked, attempt: 2, replaces: 1, text: "" }),
    stored("reply.delta", { replyTo: asked, step: 0, attempt: 2, text: "The final " }),
    // attempt 1 wakes up and goes on writing: not the reply any more
    stored("reply.delta", { replyTo: asked, step: 0, attempt: 1, text: "words of the stalled attempt " }),
    stored("reply.delta", { replyTo: asked, step: 0, attempt: 2, text: "answer." }),
    stored("reply.completed", { replyTo: asked, step: 0, attempt: 2, finishReason: "STOP",
      usage: { promptTokens: 12, completionTokens: 3, totalTokens: 15 } }),
    // and ends too: a second end, of the superseded attempt
    stored("reply.failed", { replyTo: asked, step: 0, attempt: 1, error: "OpenAIIoException: Stream failed" }),
    stored("reply.restarted", { replyTo: asked, attempt: 1, replaces: 0, text: "" }),
  ];
  events[0].index = asked;

  const drawn = replies(events);
  assert.deepEqual([...drawn.keys()], [asked]);
  assert.deepEqual(drawn.get(asked), { replyTo: asked, attempt: 2, text: "The final answer.", status: "completed",
    finishReason: "STOP", usage: { promptTokens: 12, completionTokens: 3, totalTokens: 15 }, toolCalls: [], approvals: [] });
  assert.equal(replies(events), drawn, "the same Map for the same events: a render that changed nothing folds nothing");

  // drawn one event at a time, as a page does: each change is a new reply, and the stale events change nothing
  const fold = createReplies();
  const changes = events.map((event) => fold.apply(event));
  assert.deepEqual(changes.map((reply) => reply && reply.text), [null, "The first attempt ", "The first attempt was cut ", "",
    "The final ", null, "The final answer.", "The final answer.", null, null]);
  assert.deepEqual(changes.map((reply) => reply && reply.status), [null, "streaming", "streaming", "thinking", "streaming",
    null, "streaming", "completed", null, null]);
  assert.ok(Object.isFrozen(changes[7]) && changes[6] !== changes[7], "a reply is never changed in place");
  assert.equal(fold.replies.get(asked), changes[7]);
});

test("a new attempt that continues the stored partial text starts from its reply.restarted text; a stop ends the reply",
  () => {
    const events = [
      stored("reply.delta", { replyTo: 7, step: 0, attempt: 1, text: "Once upon " }),
      stored("reply.restarted", { replyTo: 7, attempt: 2, replaces: 1, text: "Once upon " }),
      stored("reply.delta", { replyTo: 7, step: 0, attempt: 2, text: "a time" }),
      stored("reply.stopped", { replyTo: 7, step: 0, attempt: 2, reason: "stop.requested at index 9" }),
      stored("reply.delta", { replyTo: 7, step: 0, attempt: 2, text: " there was" }),   // after the end: none of it
    ];
    const reply = replies(events).get(7);
    assert.equal(reply.text, "Once upon a time");
    assert.equal(reply.status, "stopped");
    assert.equal(reply.reason, "stop.requested at index 9");
    // a reply.restarted written before it carried text (null) starts over
    assert.equal(replies([events[0], stored("reply.restarted", { replyTo: 7, attempt: 2, replaces: 1, text: null })]).get(7).text, "");
  });

test("a tool call that waits for approval: the person's answer, the tool's result on the call, and the reply that continues it",
  () => {
    const call = { callId: "call-1", name: "refund", arguments: "{\"order\":\"o-1\"}" };
    const events = [
      stored("reply.delta", { replyTo: 3, step: 0, attempt: 1, text: "Let me refund it. " }),
      stored("tool.call", { replyTo: 3, step: 0, attempt: 1, ...call }),
      stored("tool.approval.requested", { replyTo: 3, step: 0, attempt: 1, ...call }),
    ];
    assert.equal(replies(events).get(3).status, "waiting");
    assert.deepEqual(replies(events).get(3).approvals, [{ ...call, step: 0 }]);

    // pushed by this page, not stored yet: the view shows it pending, and so does the reply
    const pending = { index: null, id: "p-1", type: "tool.approved", payload: { callId: "call-1" }, createdAt: null, cause: null,
      pending: true };
    assert.equal(replies([...events, pending]).get(3).approvals[0].decision, "approved");

    const approved = stored("tool.approved", { callId: "call-1" });
    const after = [...events, approved,
      stored("tool.result", { replyTo: approved.index, step: 0, attempt: 1, callId: "call-1", name: "refund", result: "refunded",
        rejected: false })];
    let drawn = replies(after);
    assert.deepEqual([...drawn.keys()], [3], "the approval's run is a reply once it writes one");
    assert.equal(drawn.get(3).status, "continued", "its one call ran: nothing waits");
    assert.deepEqual(drawn.get(3).toolCalls, [{ ...call, step: 0, result: "refunded", rejected: false }]);
    assert.deepEqual(drawn.get(3).approvals, [{ ...call, step: 0, decision: "approved", result: "refunded", rejected: false }]);

    drawn = replies([...after, stored("reply.delta", { replyTo: approved.index, step: 0, attempt: 1, text: "Done." }),
      stored("reply.completed", { replyTo: approved.index, step: 0, attempt: 1, finishReason: "STOP", usage: null })]);
    assert.equal(drawn.get(3).status, "continued", "the reply that asked waits no more: its answer goes on in the approval's");
    assert.deepEqual(drawn.get(approved.index), { replyTo: approved.index, attempt: 1, text: "Done.", status: "completed",
      continues: 3, finishReason: "STOP", usage: null, toolCalls: [], approvals: [] });

    // a tool that needs no approval runs in the run: its result, then the model's next step
    drawn = replies([stored("tool.call", { replyTo: 4, step: 0, attempt: 1, callId: "c-2", name: "weather", arguments: "{}" }),
      stored("tool.result", { replyTo: 4, step: 0, attempt: 1, callId: "c-2", name: "weather", result: "sunny", rejected: false })]);
    assert.equal(drawn.get(4).status, "thinking");
    assert.equal(drawn.get(4).toolCalls[0].result, "sunny");
  });

test("a reply that asked for two calls waits until decisions have run both, then is continued, and a Stop changes it no more",
  () => {
    const first = { callId: "call-a", name: "refund", arguments: "{\"order\":\"o-1\"}" };
    const second = { callId: "call-b", name: "refund", arguments: "{\"order\":\"o-2\"}" };
    const asked = stored("message.sent", { text: "@assistant refund both", author: "ann", thread: "ann" });
    const events = [asked,
      stored("tool.call", { replyTo: asked.index, step: 0, attempt: 1, ...first }),
      stored("tool.call", { replyTo: asked.index, step: 0, attempt: 1, ...second }),
      stored("tool.approval.requested", { replyTo: asked.index, step: 0, attempt: 1, ...first }),
      stored("tool.approval.requested", { replyTo: asked.index, step: 0, attempt: 1, ...second })];
    const approvedA = stored("tool.approved", { callId: "call-a" });
    const oneRan = [...events, approvedA,
      stored("tool.result", { replyTo: approvedA.index, step: 0, attempt: 1, ...first, result: "refunded o-1", rejected: false })];
    assert.equal(replies(oneRan).get(asked.index).status, "waiting", "call-b still waits for a person");
    const rejectedB = stored("tool.rejected", { callId: "call-b", reason: "not this one" });
    const bothRan = [...oneRan, rejectedB,
      stored("tool.result", { replyTo: rejectedB.index, step: 0, attempt: 1, ...second, result: "rejected: not this one",
        rejected: true })];
    const drawn = replies(bothRan).get(asked.index);
    assert.equal(drawn.status, "continued");
    assert.deepEqual(drawn.approvals.map((a) => [a.decision, a.result]),
      [["approved", "refunded o-1"], ["rejected", "rejected: not this one"]]);
    // a Stop now finds nothing waiting: the server writes no end for the reply, and one written anyway changes nothing
    const fold = createReplies();
    bothRan.forEach((event) => fold.apply(event));
    assert.equal(fold.apply(stored("stop.requested", { thread: "ann" })), null);
    assert.equal(fold.apply(stored("reply.stopped", { replyTo: asked.index, step: 0, attempt: 1, reason: "late", usage: null })),
      null);
  });

test("a Stop while a reply waits for approval ends it stopped: its approvals wait no more, and a later approval changes nothing",
  () => {
    const call = { callId: "call-1", name: "refund", arguments: "{\"order\":\"o-1\"}" };
    const asked = stored("message.sent", { text: "@assistant refund o-1", author: "ann", thread: "ann" });
    const events = [
      asked,
      stored("tool.call", { replyTo: asked.index, step: 0, attempt: 1, ...call }),
      // the run ends asking: its first request carries what its model calls cost
      stored("tool.approval.requested", { replyTo: asked.index, step: 0, attempt: 1, ...call,
        usage: { promptTokens: 7, completionTokens: 2, totalTokens: 9 } }),
    ];
    assert.equal(replies(events).get(asked.index).status, "waiting");
    assert.deepEqual(replies(events).get(asked.index).usage, { promptTokens: 7, completionTokens: 2, totalTokens: 9 });

    // the Stop's run answers the waiting call as stopped, and ends the reply, in one append
    const stop = stored("stop.requested", { thread: "ann" });
    const stopped = [...events, stop,
      stored("tool.result", { replyTo: stop.index, step: 0, attempt: 1, ...call, result: "A person stopped the reply before "
        + "this tool call was approved: it did not run.", rejected: true }),
      stored("reply.stopped", { replyTo: asked.index, step: 0, attempt: 1, usage: null,
        reason: "event " + stop.index + " of type 'stop.requested' arrived while the reply waited for approval" })];
    const answer = { result: "A person stopped the reply before this tool call was approved: it did not run.", rejected: true };
    const expected = { replyTo: asked.index, attempt: 1, text: "", status: "stopped",
      reason: "event " + stop.index + " of type 'stop.requested' arrived while the reply waited for approval",
      usage: { promptTokens: 7, completionTokens: 2, totalTokens: 9 },
      toolCalls: [{ ...call, step: 0, ...answer }], approvals: [{ ...call, step: 0, ...answer }] };
    assert.deepEqual(replies(stopped).get(asked.index), expected);
    assert.deepEqual([...replies(stopped).keys()], [asked.index], "the Stop's answer is no reply of its own");

    // another device still showed the prompt and approves: the call was answered, it runs nothing, and the reply stays
    const late = { index: null, id: "p-2", type: "tool.approved", payload: { callId: "call-1" }, createdAt: null, cause: null,
      pending: true };
    assert.deepEqual(replies([...stopped, late]).get(asked.index), expected);
    assert.deepEqual(replies([...stopped, stored("tool.approved", { callId: "call-1" })]).get(asked.index), expected);

    // drawn one event at a time, the Stop's append turns the waiting reply into a stopped one
    const fold = createReplies();
    const statuses = stopped.map((event) => fold.apply(event)).map((reply) => reply && reply.status);
    assert.deepEqual(statuses, [null, "thinking", "waiting", null, "waiting", "stopped"]);
    // a second Stop's end changes nothing: one end
    assert.equal(fold.apply(stored("reply.stopped", { replyTo: asked.index, step: 0, attempt: 1, reason: "again", usage: null })),
      null);
  });

test("a stopped or failed reply carries the usage of the model calls that reported it", () => {
  const usage = { promptTokens: 14, completionTokens: 3, totalTokens: 17 };
  const drawn = replies([
    stored("reply.delta", { replyTo: 5, step: 1, attempt: 1, text: "Paid " }),
    stored("reply.stopped", { replyTo: 5, step: 1, attempt: 1, reason: "stop.requested at index 9", usage }),
    stored("reply.delta", { replyTo: 6, step: 0, attempt: 1, text: "Par" }),
    stored("reply.failed", { replyTo: 6, step: 0, attempt: 1, error: "OpenAIIoException: Stream failed", usage: null }),
  ]);
  assert.deepEqual(drawn.get(5).usage, usage);
  assert.equal(drawn.get(6).usage, null, "none reported: none made up");
});

test("a reply drawn from the server's events is the reply the server stored", { skip: NO_SERVER }, async (t) => {
  const id = sessionId("replies");
  const room = client(t).session("chat", id);
  const [{ index }] = await room.push([message("@assistant what is A2?", "ann")]);
  const reply = await until(room, (v) => {
    const drawn = replies(v.events).get(index);
    return drawn && drawn.status === "completed" && drawn;
  }, "the assistant's reply to end");
  const server = await storedReply(id, index);
  assert.equal(reply.text, server.text);
  assert.ok(reply.text.startsWith("Hello ann. You asked: \u201cwhat is A2?\u201d."), reply.text);
  const deltas = (await history("chat", id)).filter((e) => e.type === "reply.delta");
  assert.ok(deltas.length > 1, "the answer came in " + deltas.length + " deltas");
});

test("a pizza waits for approval, and the approved call's run continues the reply, drawn as the server stores it",
  { skip: NO_SERVER }, async (t) => {
    const id = sessionId("replies-pizza");
    const room = client(t).session("chat", id);
    const [{ index }] = await room.push([message("@assistant order a pizza please", "ann")]);
    const waiting = await until(room, (v) => {
      const drawn = replies(v.events).get(index);
      return drawn && drawn.status === "waiting" && drawn;
    }, "the reply to wait for approval");
    assert.equal(waiting.approvals.length, 1);
    const { callId, name } = waiting.approvals[0];
    assert.equal(name, "order_pizza");
    const [approved] = await room.push([{ type: "tool.approved", payload: { callId } }]);
    const answer = await until(room, (v) => {
      const drawn = replies(v.events).get(approved.index);
      return drawn && drawn.status === "completed" && drawn;
    }, "the approved call's reply to end");
    assert.equal(answer.continues, index);
    const asked = replies(room.view.events).get(index);
    assert.equal(asked.status, "continued", "the reply that asked waits no more");
    assert.equal(asked.approvals[0].decision, "approved");
    assert.match(asked.approvals[0].result, /^Pizza order #\d+ placed/);
    assert.equal(answer.text, (await storedReply(id, approved.index)).text);
    assert.ok(answer.text.startsWith("Done: Pizza order #"), answer.text);
  });

test("a reply taken over after its instance stopped mid-answer is drawn as the new attempt's text only",
  { skip: NO_SERVER || (RESTART ? false : "A2_RESTART_URL is not set"), timeout: 120000 }, async (t) => {
    const id = sessionId("replies-takeover");
    const room = client(t).session("chat", id);
    // an answer that streams for longer than the sample's stop grace (10 s): it echoes the question, a word per 20 ms
    const question = "@assistant" + " go".repeat(660);   // 2000 characters at most
    const [{ index }] = await room.push([message(question, "ann")]);
    await until(room, (v) => replies(v.events).get(index)?.status === "streaming", "the reply to stream");
    // the server stops (its stop grace runs out mid-answer, the attempt is let go) and starts again: attempt 2 takes over
    await restartServer();
    const reply = await until(room, (v) => {
      const drawn = replies(v.events).get(index);
      return drawn && drawn.status === "completed" && drawn;
    }, "the reply to end after the takeover");
    assert.equal(reply.attempt, 2);
    const events = await history("chat", id);
    const deltas = events.filter((e) => e.type === "reply.delta" && e.payload.replyTo === index);
    assert.ok(deltas.some((e) => e.payload.attempt === 1), "attempt 1 streamed before the stop");
    assert.ok(events.some((e) => e.type === "reply.restarted" && e.payload.attempt === 2), "attempt 2 restarted the reply");
    const server = await storedReply(id, index);
    assert.equal(server.attempt, 2);
    assert.equal(reply.text, server.text);
    assert.notEqual(reply.text, deltas.map((e) => e.payload.text).join(""), "not every delta appended");
    assert.ok(reply.text.startsWith("Hello ann. You asked: \u201cgo go"), reply.text.slice(0, 60));
  });
