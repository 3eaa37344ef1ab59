import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createClient } from "../src/client.js";
import { client, eventually, history, message, messages, sent, next, NO_SERVER, NO_WEBSOCKET, PATIENCE, RESTART, restartServer,
  sessionId, until } from "./support.mjs";

test("a view shows the history, then live events, in index order", { skip: NO_SERVER }, async (t) => {
  const a2 = client(t);
  const id = sessionId("history");
  await a2.push("chat", id, [message("one"), message("two")]);
  const room = a2.session("chat", id, { state: "summary" });
  await until(room, (v) => sent(v).length === 2 && v.status === "live", "the history");
  await room.push([message("three")]);
  const view = await until(room, (v) => sent(v).length === 3 && !v.pending.length && v.state && v.state.state.messages === 3 && v);
  assert.deepEqual(sent(view).map((e) => e.payload.text), ["one", "two", "three"]);
  assert.deepEqual(view.events.map((e) => e.index), view.events.map((e, i) => i + 1), "every index once, in order");
});

for (const transport of ["sse", "socket"]) {
  test("a view resumes after its last index across a server restart, with no gap and no repeat (" + transport + ")",
    { skip: NO_SERVER || (!RESTART && "A2_RESTART_URL is not set") || (transport === "socket" && NO_WEBSOCKET) }, async (t) => {
      const a2 = client(t, { transport });
      const id = sessionId("restart-" + transport);
      const room = a2.session("chat", id);
      const seen = [];
      room.on("event", (event) => seen.push(event.index));
      await room.push([message("before 1"), message("before 2")]);
      await until(room, (v) => sent(v).length === 2 && v.status === "live", "the first events");

      const down = next(room, "status", (status) => status === "reconnecting");
      await restartServer();
      await down;
      // pushed by another client while this view reconnects: it must come through the resumed stream
      const other = client(t);
      await other.push("chat", id, [message("after 1")]);
      await room.push([message("after 2")]);
      await until(room, (v) => sent(v).length === 4 && v.status === "live", "the messages after the restart");
      // the sample's consumers answer each message too: wait until the view has all the server holds
      const stored = await history("chat", id);
      await until(room, (v) => v.lastIndex >= stored[stored.length - 1].index, "the view to reach the head");

      assert.deepEqual(sent(room.getSnapshot()).map((e) => e.payload.text), ["before 1", "before 2", "after 1", "after 2"]);
      // what the view saw, then the history: a consumer's event may still arrive while it is read, and
      // everything seen was stored before it was streamed, so the history read after holds it all
      const seenBefore = [...seen];
      const all = (await history("chat", id)).map((e) => e.index);
      assert.deepEqual(seenBefore, all.slice(0, seenBefore.length), "every index once, in order, none missing");
      assert.deepEqual(all, all.map((e, i) => i + 1));
    });
}

test("a consumer's events carry their cause, and causeOf finds the message they answer", { skip: NO_SERVER }, async (t) => {
  const a2 = client(t);
  const room = a2.session("chat", sessionId("cause"));
  await room.push([message("@assistant first", "ann"), message("@assistant second", "bob")]);
  const view = await until(room, (v) => v.events.filter((e) => e.type === "reply.completed").length === 2 && v, "both replies");
  for (const delta of view.events.filter((e) => e.type === "reply.delta")) {
    assert.equal(delta.cause.consumer, "assistant");
    const asked = room.causeOf(delta);
    assert.equal(asked.index, delta.cause.index);
    assert.equal(delta.payload.replyTo, asked.index, "the reply answers the message its cause names");
  }
});

test("a cleared session empties the view, and the view goes on after the clear", { skip: NO_SERVER }, async (t) => {
  const a2 = client(t);
  const id = sessionId("cleared");
  const room = a2.session("chat", id, { state: "summary" });
  await room.push([message("old")]);
  // confirmed by the stream before the clear (push.test.mjs has the push a clear overtakes)
  await until(room, (v) => sent(v).length === 1 && !v.pending.length);
  const cleared = next(room, "cleared");
  const response = await fetch(process.env.A2_BASE_URL + "/a2/chat/sessions/" + id, { method: "DELETE" });
  assert.equal(response.status, 200);
  const [marker] = await cleared;
  assert.ok(room.events.every((e) => e.index > marker));
  await room.push([message("new")]);
  const view = await until(room, (v) => sent(v).length === 1 && !v.pending.length && v.state && v.state.state.messages === 1 && v);
  assert.equal(sent(view)[0].payload.text, "new");
  assert.ok(sent(view)[0].index > marker);
  assert.equal(view.state.state.messages, 1);
});

test("a stream refused by the server surfaces its error code and does not reconnect", { skip: NO_SERVER }, async (t) => {
  const a2 = client(t);
  const unknown = a2.session("no-such-contract", sessionId("unknown"));
  const view = await until(unknown, (v) => v.status === "error" && v, "the error");
  assert.equal(view.error.code, "UNKNOWN_CONTRACT");
  assert.equal(view.error.status, 404);
  const reducer = a2.session("chat", sessionId("reducer"), { state: "no-such-reducer" });
  assert.equal((await until(reducer, (v) => v.error)).code, "UNKNOWN_REDUCER");
});

for (const transport of ["sse", "socket"]) {
  test("a history of 1500 messages arrives whole, in order (" + transport + ")",
    { skip: NO_SERVER || (transport === "socket" && NO_WEBSOCKET) }, async (t) => {
      const a2 = client(t, { transport });
      const id = sessionId("long-" + transport);
      for (let batch = 0; batch < 15; batch++) {
        await a2.push("chat", id, Array.from({ length: 100 }, (_, i) => message("m" + (batch * 100 + i), "bulk")));
      }
      const room = a2.session("chat", id);
      const view = await until(room, (v) => sent(v).length === 1500 && v, "1500 messages");
      assert.deepEqual(sent(view).map((e) => e.payload.text), Array.from({ length: 1500 }, (_, i) => "m" + i));
      // the sample's consumers write events of their own in between: every index once, in order
      assert.deepEqual(view.events.map((e) => e.index), view.events.map((e, i) => i + 1));
    });
}

/** A local server: `answer(request, response)` serves it; answers the base URL and the stream requests per session. */
async function server(t, answer) {
  const streams = {};
  const s = http.createServer((request, response) => {
    const stream = /\/sessions\/([^/]+)\/stream/.exec(request.url);
    if (stream) streams[stream[1]] = (streams[stream[1]] || 0) + 1;
    answer(request, response);
  });
  await new Promise((resolve) => s.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    s.closeAllConnections();
    s.close();
  });
  return { base: "http://127.0.0.1:" + s.address().port + "/a2", streams };
}

test("a stream answered with a page that is not an event stream (a login page after a redirect) is an error the view surfaces",
  async (t) => {
    // Spring Security's form login: the expired session's stream is redirected to the login page, which fetch follows
    const { base, streams } = await server(t, (request, response) => {
      if (request.url.includes("/stream")) {
        response.writeHead(302, { Location: "/login" });
        response.end();
      } else {
        response.writeHead(200, { "Content-Type": "text/html;charset=UTF-8" });
        response.end("<!DOCTYPE html>\n<html><body><form action=\"/login\">Please sign in</form></body></html>\n");
      }
    });
    const a2 = createClient({ baseUrl: base, backoff: { initial: 20, max: 100 } });
    t.after(() => a2.close());
    const room = a2.session("chat", "lobby");
    const statuses = [];
    room.on("status", (status) => statuses.push(status));
    const view = await until(room, (v) => v.status === "error" && v, "the view's error");
    assert.equal(view.error.code, "UNEXPECTED_RESPONSE");
    assert.match(view.error.message, /text\/html/);
    assert.match(view.error.message, /\/login/);
    assert.deepEqual(statuses, ["error"], "never live on a login page");
    assert.equal(streams.lobby, 1, "not asked again until the page acts");

    room.reconnect();   // after a new login, say
    await until(room, () => streams.lobby === 2, "the stream asked again");
  });

test("a stream that ends before it delivered anything is asked again with a growing back-off, one that delivered something at once",
  async (t) => {
    const { base, streams } = await server(t, (request, response) => {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      // an instance that accepts and drops; beside it, one that delivers the presence snapshot, then drops
      if (request.url.includes("/sessions/talking/")) response.write("event: presence\ndata: {\"snapshot\":{\"participants\":{}}}\n\n");
      response.end();
    });
    const a2 = createClient({ baseUrl: base, backoff: { initial: 20, max: 60000 } });
    t.after(() => a2.close());
    a2.session("chat", "silent");
    a2.session("chat", "talking");
    // the talking stream is asked again within 20 ms each time; from 20 ms doubling, the silent one's
    // twelfth request would come over 20 s after its first
    await eventually(() => streams.talking >= 25, "25 requests of the stream that delivered something");
    assert.ok(streams.silent < 12, "the stream that delivered nothing was asked " + streams.silent + " times meanwhile");
  });

test("a view asked of a closed client is closed and opens no stream; a push to it rejects with CLOSED", { timeout: PATIENCE }, async (t) => {
  const { base, streams } = await server(t, (request, response) => {
    response.writeHead(200, { "Content-Type": "text/event-stream" });
  });
  const controller = new AbortController();
  const a2 = createClient({ baseUrl: base, signal: controller.signal });
  controller.abort();   // the page's signal closes the client
  assert.equal(a2.closed, true);
  const room = a2.session("chat", "late");   // a component mounting after the client was closed
  assert.equal(room.getSnapshot().status, "closed");
  await assert.rejects(room.push([message("too late")]), { code: "CLOSED" });
  await assert.rejects(a2.push("chat", "late", [message("too late")]), { code: "CLOSED" });
  assert.deepEqual(streams, {});
});
