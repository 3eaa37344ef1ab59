#!/usr/bin/env node
// Checks a running A2 server against docs/PROTOCOL.md (version 1), as a client sees it.
//
//   node a2-client/conformance.mjs http://localhost:8080 [--base-path /a2] [--contract chat]
//        [--event-type message.sent] [--payload '{"text":"hi","author":"c","thread":"c"}']
//        [--reducer summary] [--presence-field typing] [--presence-value true]
//
// The defaults fit the sample application. Each check prints "ok" or "not ok" with what differed;
// the exit code is 0 only when every check passed. Sessions are new for every run.

const args = process.argv.slice(2);
if (args.length === 0 || args[0].startsWith("--")) {
  console.error("usage: node conformance.mjs BASE_URL [--base-path /a2] [--contract chat] [--event-type message.sent] "
    + "[--payload JSON] [--reducer summary] [--presence-field typing] [--presence-value true]");
  process.exit(2);
}
function option(name, fallback) {
  const at = args.indexOf("--" + name);
  return at > 0 ? args[at + 1] : fallback;
}
const origin = args[0].replace(/\/$/, "");
const base = origin + option("base-path", "/a2");
const contract = option("contract", "chat");
const type = option("event-type", "message.sent");
const payload = JSON.parse(option("payload", '{"text":"conformance","author":"conformance","thread":"conformance"}'));
const reducer = option("reducer", "summary");
const field = option("presence-field", "typing");
const fieldValue = JSON.parse(option("presence-value", "true"));
const run = Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 6);
const PATIENCE = 15000;

let failed = 0;
let passed = 0;
async function check(name, body) {
  try {
    await body();
    passed++;
    console.log("ok - " + name);
  } catch (e) {
    failed++;
    console.log("not ok - " + name + "\n    " + String(e && e.stack || e).split("\n").slice(0, 3).join("\n    "));
  }
}
function expect(condition, message) {
  if (!condition) throw new Error(message);
}
function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(what + ": expected " + e + ", was " + a);
}

let sessions = 0;
const newSession = (name) => "conformance-" + name + "-" + run + "-" + (++sessions);
const sessionUrl = (session, rest = "") => base + "/" + contract + "/sessions/" + encodeURIComponent(session) + rest;
const event = (id) => ({ type, payload, id });

async function request(method, url, body, headers = {}) {
  const response = await fetch(url, { method, headers: Object.assign(body === undefined ? {} : { "Content-Type": "application/json" }, headers),
    body: body === undefined ? undefined : (typeof body === "string" ? body : JSON.stringify(body)) });
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // checked by the caller
  }
  return { status: response.status, headers: response.headers, json, text };
}

/** An error answer: the status and {"error":{"code","message"}}. */
function expectError(answer, status, code) {
  equal(answer.status, status, "status");
  expect(answer.json && answer.json.error, "the body is {\"error\":{…}}: " + answer.text.slice(0, 200));
  equal(answer.json.error.code, code, "error.code");
  expect(typeof answer.json.error.message === "string" && answer.json.error.message.length > 0, "error.message is a non-empty string");
}

/** Reads an SSE stream into frames {event, id, data}; `until(predicate)` waits for a frame. */
function sse(url, headers = {}) {
  const controller = new AbortController();
  const frames = [];
  const waiters = [];
  let response = null;
  const started = (async () => {
    response = await fetch(url, { headers: Object.assign({ Accept: "text/event-stream" }, headers), signal: controller.signal });
    if (!response.ok) return;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let frame = { event: "message", id: null, data: [] };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let newline;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/, "");
          buffer = buffer.slice(newline + 1);
          if (line === "") {
            if (frame.data.length) {
              frames.push({ event: frame.event, id: frame.id, data: JSON.parse(frame.data.join("\n")) });
              waiters.forEach((w) => w());
            }
            frame = { event: "message", id: null, data: [] };
          } else if (!line.startsWith(":")) {
            const colon = line.indexOf(":");
            const name = colon < 0 ? line : line.slice(0, colon);
            const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
            if (name === "event") frame.event = text;
            else if (name === "data") frame.data.push(text);
            else if (name === "id") frame.id = text;
          }
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    frames,
    get response() {
      return response;
    },
    started,
    until(predicate, what) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no " + what + " within " + PATIENCE + " ms; frames: "
          + JSON.stringify(frames).slice(0, 500))), PATIENCE);
        const test = () => {
          const found = predicate(frames);
          if (found) {
            clearTimeout(timer);
            resolve(found);
          }
        };
        waiters.push(test);
        test();
      });
    },
    close() {
      controller.abort();
    },
  };
}

const eventsOf = (frames) => frames.filter((f) => f.event === "events").flatMap((f) => f.data.events);

// --- push and idempotency

await check("push stores a batch and answers the stored events with contiguous indexes", async () => {
  const session = newSession("push");
  const answer = await request("POST", sessionUrl(session, "/events"), { events: [event("c-1"), event("c-2")] });
  equal(answer.status, 200, "status");
  const events = answer.json.events;
  equal(events.map((e) => [e.index, e.id, e.type]), [[1, "c-1", type], [2, "c-2", type]], "index, id, type");
  for (const e of events) {
    expect(!Number.isNaN(Date.parse(e.createdAt)), "createdAt is an ISO-8601 instant: " + e.createdAt);
    expect("payload" in e, "payload is present");
    expect(e.cause === undefined || e.cause === null, "a pushed event has no cause");
  }
});

await check("a push again with the same ids stores nothing and answers the same indexes", async () => {
  const session = newSession("idempotent");
  const first = await request("POST", sessionUrl(session, "/events"), { events: [event("same-1"), event("same-2")] });
  const again = await request("POST", sessionUrl(session, "/events"), { events: [event("same-1"), event("same-2")] });
  equal(again.status, 200, "status");
  equal(again.json.events.map((e) => [e.index, e.id]), first.json.events.map((e) => [e.index, e.id]), "the answer");
  const history = await request("GET", sessionUrl(session, "/events?after=0&limit=1000"));
  equal(history.json.events.filter((e) => e.id.startsWith("same-")).length, 2, "stored events with those ids");
});

await check("an event without an id gets one (a UUID)", async () => {
  const answer = await request("POST", sessionUrl(newSession("no-id"), "/events"), { events: [{ type, payload }] });
  equal(answer.status, 200, "status");
  expect(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(answer.json.events[0].id), "a UUIDv4: " + answer.json.events[0].id);
});

await check("a bad push is refused whole with INVALID_PAYLOAD (400) and stores nothing", async () => {
  const session = newSession("bad");
  expectError(await request("POST", sessionUrl(session, "/events"), { events: [] }), 400, "INVALID_PAYLOAD");
  expectError(await request("POST", sessionUrl(session, "/events"), { events: [event("fine"), { type: "no.such.type", payload: {} }] }), 400, "INVALID_PAYLOAD");
  expectError(await request("POST", sessionUrl(session, "/events"), "{not json"), 400, "INVALID_PAYLOAD");
  expectError(await request("POST", sessionUrl(session, "/events"), { events: [{ type, payload, id: "6ba7b810-9dad-51d1-80b4-00c04fd430c8" }] }), 400, "INVALID_PAYLOAD");
  const history = await request("GET", sessionUrl(session, "/events"));
  equal(history.json.events.length, 0, "events stored");
});

await check("a body over the limit is refused with PAYLOAD_TOO_LARGE (413)", async () => {
  const big = { events: [{ type, payload: Object.assign({}, payload, { padding: "x".repeat(1024 * 1024) }) }] };
  expectError(await request("POST", sessionUrl(newSession("large"), "/events"), big), 413, "PAYLOAD_TOO_LARGE");
});

await check("an unknown contract is UNKNOWN_CONTRACT (404), an unknown reducer UNKNOWN_REDUCER (404)", async () => {
  expectError(await request("GET", base + "/no-such-contract-" + run + "/sessions/x/events"), 404, "UNKNOWN_CONTRACT");
  expectError(await request("GET", sessionUrl(newSession("reducer"), "/state/no-such-reducer")), 404, "UNKNOWN_REDUCER");
});

// --- history and state

await check("history pages after an index, with the head", async () => {
  const session = newSession("history");
  await request("POST", sessionUrl(session, "/events"), { events: [event("h-1"), event("h-2"), event("h-3")] });
  const page = await request("GET", sessionUrl(session, "/events?after=1&limit=1"));
  equal(page.status, 200, "status");
  equal(page.json.events.map((e) => e.index), [2], "the page");
  expect(page.json.head >= 3, "head is the last index: " + page.json.head);
  expectError(await request("GET", sessionUrl(session, "/events?limit=1001")), 400, "INVALID_PAYLOAD");
  expectError(await request("GET", sessionUrl(session, "/events?after=-1")), 400, "INVALID_PAYLOAD");
});

await check("state answers {index, state}", async () => {
  const session = newSession("state");
  await request("POST", sessionUrl(session, "/events"), { events: [event("s-1")] });
  const state = await request("GET", sessionUrl(session, "/state/" + reducer));
  equal(state.status, 200, "status");
  expect(state.json.index >= 1 && "state" in state.json, "{index, state}: " + state.text);
});

// --- the SSE stream

await check("the stream sends history then live events, each batch's id its last index, in order without gaps", async () => {
  const session = newSession("stream");
  await request("POST", sessionUrl(session, "/events"), { events: [event("e-1"), event("e-2")] });
  const stream = sse(sessionUrl(session, "/stream?after=0&state=" + reducer));
  try {
    await stream.until((frames) => eventsOf(frames).some((e) => e.id === "e-2"), "history");
    expect((stream.response.headers.get("content-type") || "").startsWith("text/event-stream"), "content type text/event-stream");
    await request("POST", sessionUrl(session, "/events"), { events: [event("e-3")] });
    await stream.until((frames) => eventsOf(frames).some((e) => e.id === "e-3"), "the live event");
    const indexes = eventsOf(stream.frames).map((e) => e.index);
    equal(indexes, indexes.map((_, i) => i + 1), "indexes");
    for (const frame of stream.frames.filter((f) => f.event === "events")) {
      equal(frame.id, String(frame.data.events[frame.data.events.length - 1].index), "the id of an events frame");
    }
    await stream.until((frames) => frames.some((f) => f.event === "state" && f.data.index >= 3), "a state frame after the batch");
    // presence is read beside the events, so its snapshot may come before or after them
    await stream.until((frames) => frames.some((f) => f.event === "presence"), "a presence frame");
    const presence = stream.frames.find((f) => f.event === "presence");
    expect(presence.data.snapshot && typeof presence.data.snapshot.participants === "object",
      "a presence snapshot {participants} first");
  } finally {
    stream.close();
  }
});

await check("Last-Event-ID resumes exactly after that index (and overrides after=)", async () => {
  const session = newSession("resume");
  await request("POST", sessionUrl(session, "/events"), { events: [event("r-1"), event("r-2"), event("r-3")] });
  const stream = sse(sessionUrl(session, "/stream?after=0"), { "Last-Event-ID": "2" });
  try {
    await stream.until((frames) => eventsOf(frames).length > 0, "an events frame");
    equal(eventsOf(stream.frames)[0].index, 3, "the first index after Last-Event-ID 2");
  } finally {
    stream.close();
  }
});

await check("presence: a write answers its patches, subscribers get them, reads answer {participants}", async () => {
  const session = newSession("presence");
  const stream = sse(sessionUrl(session, "/stream"));
  try {
    await stream.until((frames) => frames.some((f) => f.event === "presence" && f.data.snapshot), "the snapshot");
    const write = await request("PUT", sessionUrl(session, "/presence"), { participant: "conformance", values: { [field]: fieldValue } });
    equal(write.status, 200, "status");
    expect(Array.isArray(write.json.patches), "{patches:[…]}: " + write.text);
    const patch = await stream.until((frames) => frames.flatMap((f) => (f.event === "presence" && f.data.patches) || [])
      .find((p) => p.participant === "conformance" && p.field === field), "the patch on the stream");
    equal(patch.value, fieldValue, "the patch's value");
    const read = await request("GET", sessionUrl(session, "/presence"));
    equal(read.json.participants.conformance[field].value, fieldValue, "the read value");
    expectError(await request("PUT", sessionUrl(session, "/presence"), { participant: "a2", values: { [field]: fieldValue } }), 400, "INVALID_PAYLOAD");
  } finally {
    stream.close();
  }
});

await check("clear: ifLastIndex that no longer holds is CONFLICT (409); a clear streams `cleared` and hides older events", async () => {
  const session = newSession("clear");
  await request("POST", sessionUrl(session, "/events"), { events: [event("k-1")] });
  const stream = sse(sessionUrl(session, "/stream"));
  try {
    await stream.until((frames) => eventsOf(frames).length > 0, "the history");
    expectError(await request("DELETE", sessionUrl(session, "?ifLastIndex=999999")), 409, "CONFLICT");
    const cleared = await request("DELETE", sessionUrl(session));
    equal(cleared.status, 200, "status");
    const frame = await stream.until((frames) => frames.find((f) => f.event === "cleared"), "the cleared frame");
    equal(frame.data.index, cleared.json.index, "the cleared index");
    equal(frame.id, String(cleared.json.index), "the cleared frame's id");
    const history = await request("GET", sessionUrl(session, "/events"));
    expect(history.json.events.every((e) => e.index > cleared.json.index), "history hides what the clear ended");
  } finally {
    stream.close();
  }
});

// --- the WebSocket

if (typeof WebSocket !== "function") {
  console.log("# the WebSocket checks need a Node with WebSocket (22, or 20 with --experimental-websocket): skipped");
} else {
  await check("socket: subscribe, events, push with a ref acked, errors answered with the socket kept open, unsubscribe", async () => {
    const url = new URL(base + "/" + contract + "/socket");
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(url.href);
    const frames = [];
    const waiters = [];
    socket.onmessage = (m) => {
      frames.push(JSON.parse(m.data));
      waiters.forEach((w) => w());
    };
    const until = (predicate, what) => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no " + what + "; frames: " + JSON.stringify(frames).slice(0, 500))), PATIENCE);
      const test = () => {
        const found = frames.find(predicate);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      };
      waiters.push(test);
      test();
    });
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error("the socket did not open"));
    });
    try {
      const one = newSession("socket-a");
      const two = newSession("socket-b");
      await request("POST", sessionUrl(one, "/events"), { events: [event("w-1")] });
      socket.send(JSON.stringify({ type: "subscribe", session: one, after: 0 }));
      socket.send(JSON.stringify({ type: "subscribe", session: two, after: 0 }));
      const subscribed = await until((f) => f.type === "subscribed" && f.session === one, "subscribed");
      expect(subscribed.head >= 1, "head is the session's last index (1 or more, the server's consumers may add): " + subscribed.head);
      await until((f) => f.type === "subscribed" && f.session === two, "the second subscription");
      await until((f) => f.type === "events" && f.session === one && f.events.some((e) => e.id === "w-1"), "history");
      await until((f) => f.type === "presence" && f.session === one && f.snapshot, "the presence snapshot");

      socket.send(JSON.stringify({ type: "push", ref: "r-1", session: two, events: [event("w-2")] }));
      const ack = await until((f) => f.type === "ack" && f.ref === "r-1", "the ack");
      equal(ack.events, [{ index: 1, id: "w-2" }], "the ack's events");
      await until((f) => f.type === "events" && f.session === two && f.events.some((e) => e.id === "w-2"), "the pushed event on its session");
      expect(!frames.some((f) => f.type === "events" && f.session === one && f.events.some((e) => e.id === "w-2")), "no event on another session");

      socket.send(JSON.stringify({ type: "push", ref: "r-2", session: two, events: [] }));
      equal((await until((f) => f.type === "error" && f.ref === "r-2", "an error with the ref")).error.code, "INVALID_PAYLOAD", "code");
      socket.send("{not json");
      await until((f) => f.type === "error" && !f.ref && f.error.code === "INVALID_PAYLOAD", "an error for a malformed frame");
      socket.send(JSON.stringify({ type: "ping" }));
      await until((f) => f.type === "pong", "pong (the socket stays open)");

      socket.send(JSON.stringify({ type: "push", ref: "r-3", session: two, events: [event("w-2")] }));
      equal((await until((f) => f.type === "ack" && f.ref === "r-3", "the retry's ack")).events, [{ index: 1, id: "w-2" }], "a retry's ack");

      socket.send(JSON.stringify({ type: "unsubscribe", session: one }));
      await until((f) => f.type === "unsubscribed" && f.session === one, "unsubscribed");
    } finally {
      socket.close();
    }
  });
}

console.log("# " + passed + " passed, " + failed + " failed (" + origin + ", contract " + contract + ")");
process.exit(failed === 0 ? 0 : 1);
