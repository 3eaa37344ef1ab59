import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { A2Error, createClient, MemoryOutbox } from "../src/client.js";
import { client, eventually, history, messages, sent, message, next, NO_SERVER, NO_WEBSOCKET, PATIENCE, proxy, sessionId, until } from "./support.mjs";

test("a push whose answer is lost is sent again with the same ids and stored once", { skip: NO_SERVER }, async (t) => {
  const cutter = await proxy(t);
  const a2 = client(t, { baseUrl: cutter.url + "/a2" });
  const id = sessionId("lost-answer");
  cutter.cutAnswerOf(/^POST [^ ]*\/events /);
  const stored = await a2.push("chat", id, [message("once"), message("only once")]);

  assert.deepEqual(cutter.cut, ["HTTP/1.1 200 OK"], "the server answered the first push, and the client never saw it");
  assert.deepEqual(stored.map((e) => e.index), [1, 2]);
  const events = await messages("chat", id);
  assert.deepEqual(events.map((e) => [e.index, e.id, e.payload.text]),
    [[1, stored[0].id, "once"], [2, stored[1].id, "only once"]]);
});

test("a push over the socket whose ack is lost is sent again when the socket is back, and stored once", { skip: NO_SERVER || NO_WEBSOCKET }, async (t) => {
  const cutter = await proxy(t);
  const a2 = client(t, { baseUrl: cutter.url + "/a2", transport: "socket" });
  const id = sessionId("lost-ack");
  const room = a2.session("chat", id);
  await until(room, (v) => v.status === "live");
  cutter.cutAnswerOf();   // the next frame the client sends is the push; what answers it is cut
  const stored = await room.push([message("through the socket")]);

  assert.equal(cutter.cut.length, 1);
  assert.deepEqual(stored.map((e) => e.index), [1]);
  await until(room, (v) => sent(v).length === 1 && v.status === "live" && !v.pending.length);
  assert.deepEqual((await messages("chat", id)).map((e) => e.id), [stored[0].id]);
});

test("a push not answered before the page went is sent by the next page from the outbox, stored once", { skip: NO_SERVER }, async (t) => {
  const cutter = await proxy(t);
  const storage = new MemoryOutbox();
  const id = sessionId("reload");
  const first = createClient({ baseUrl: cutter.url + "/a2", outbox: storage, backoff: { initial: 60000, max: 60000 } });
  cutter.cutAnswerOf(/^POST [^ ]*\/events /);
  const lost = first.push("chat", id, [message("sent before the reload")]);
  lost.catch(() => {});
  // the server stored it, the answer was cut; the page goes before its retry
  await eventually(() => cutter.cut.length === 1, "the cut");
  first.close();
  assert.equal((await storage.load()).length, 1, "the push waits in the outbox");

  const second = client(t, { outbox: storage });
  const room = second.session("chat", id);
  const view = await until(room, (v) => sent(v).length === 1 && !v.pending.length && v, "the outbox sent");
  assert.equal(sent(view)[0].payload.text, "sent before the reload");
  await eventually(() => storage.entries.size === 0, "the outbox emptied");
  assert.equal((await messages("chat", id)).length, 1);
});

test("pushed events show at once as pending and are replaced by the stored ones", { skip: NO_SERVER }, async (t) => {
  const a2 = client(t);
  const room = a2.session("chat", sessionId("optimistic"));
  await until(room, (v) => v.status === "live");
  const reconciled = [];
  room.on("event", (event, { wasPending }) => reconciled.push(wasPending));
  const answer = room.push([message("hello"), { id: "my-own-id", ...message("mine") }]);
  const pending = room.getSnapshot().pending;
  assert.deepEqual(pending.map((e) => [e.index, e.payload.text, e.pending]), [[null, "hello", true], [null, "mine", true]]);
  assert.equal(pending[1].id, "my-own-id");
  const stored = await answer;
  const view = await until(room, (v) => v.pending.length === 0 && sent(v).length === 2 && v);
  assert.deepEqual(sent(view).map((e) => e.id), [pending[0].id, "my-own-id"]);
  assert.deepEqual(stored.map((e) => e.id), [pending[0].id, "my-own-id"]);
  assert.deepEqual(reconciled.slice(0, 2), [true, true]);
});

test("a push the session's clear overtook before the stream showed it leaves no pending event behind", { skip: NO_SERVER }, async (t) => {
  const network = await proxy(t);
  const a2 = client(t, { baseUrl: network.url + "/a2" });
  const id = sessionId("cleared-pending");
  const room = a2.session("chat", id);
  await until(room, (v) => v.status === "live");
  // the stream is down while the push is stored and the session cleared: it comes back after the clear
  network.hold(/^GET [^ ]*\/stream/);
  network.dropAll();
  await until(room, (v) => v.status === "reconnecting");
  const [stored] = await room.push([message("said, then cleared")]);
  const response = await fetch(process.env.A2_BASE_URL + "/a2/chat/sessions/" + id, { method: "DELETE" });
  assert.equal(response.status, 200);
  const cleared = next(room, "cleared");
  network.release();
  const [marker] = await cleared;
  assert.ok(marker > stored.index, "the clear came after the push");
  const view = await until(room, (v) => v.status === "live" && !v.pending.length && v, "the pending event to go");
  assert.deepEqual(sent(view), []);
});

test("a rejected push rejects with the server's code, withdraws its pending events, and stores nothing", { skip: NO_SERVER }, async (t) => {
  const a2 = client(t);
  const id = sessionId("rejected");
  const room = a2.session("chat", id);
  const failed = new Promise((resolve) => room.on("failed", resolve));
  await assert.rejects(room.push([message("fine"), { type: "message.sent", payload: { text: "", author: "ann", thread: "ann" } }]),
    (error) => error instanceof A2Error && error.code === "INVALID_PAYLOAD" && error.status === 400
      && /events\[1\]\.payload\.text/.test(error.message));
  const { events, error } = await failed;
  assert.equal(events.length, 2);
  assert.equal(error.code, "INVALID_PAYLOAD");
  assert.equal(room.getSnapshot().pending.length, 0);
  await assert.rejects(a2.push("no-such-contract", id, [message("x")]), { code: "UNKNOWN_CONTRACT", status: 404 });
  assert.deepEqual(await history("chat", id), []);
});

test("an aborted push stops retrying and rejects", { skip: NO_SERVER }, async (t) => {
  const a2 = client(t, { baseUrl: "http://127.0.0.1:9/a2" });   // nothing listens: every attempt fails
  const controller = new AbortController();
  const pushed = a2.push("chat", sessionId("aborted"), [message("never")], { signal: controller.signal });
  controller.abort();
  await assert.rejects(pushed, (error) => error.name === "AbortError" || error.code === "ABORTED");
});

test("a 401 on the stream is an error the page can act on, and pushes carry Spring Security's CSRF token", async (t) => {
  // a server that wants a login: what a Spring Security application answers once the session is gone
  const seen = [];
  const server = http.createServer((request, response) => {
    seen.push({ method: request.method, url: request.url, csrf: request.headers["x-xsrf-token"] });
    response.writeHead(401, { "Content-Type": "application/json" });
    response.end(JSON.stringify({ error: { code: "UNAUTHORIZED", message: "log in first" } }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const base = "http://127.0.0.1:" + server.address().port + "/a2";
  const a2 = createClient({ baseUrl: base, csrf: () => "token-from-the-cookie" });
  t.after(() => a2.close());

  const room = a2.session("chat", "lobby");
  const view = await until(room, (v) => v.status === "error" && v);
  assert.equal(view.error.code, "UNAUTHORIZED");
  assert.equal(view.error.status, 401);
  await assert.rejects(room.push([message("hi")]), { code: "UNAUTHORIZED" });
  assert.equal(seen.filter((r) => r.url.endsWith("/stream?after=0")).length, 1, "no reconnect loop after a 401");
  assert.equal(seen.find((r) => r.method === "POST").csrf, "token-from-the-cookie");

  // the page logs in again, then asks the view to reconnect
  room.reconnect();
  await until(room, () => seen.filter((r) => r.url.endsWith("/stream?after=0")).length === 2);
});

test("a bearer token refused by a security filter, with no body of A2's, says why its challenge gives (an expired token)",
  async (t) => {
    // Spring Security's resource server: 401 with no body, the reason in WWW-Authenticate
    const server = http.createServer((request, response) => {
      response.writeHead(401, { "WWW-Authenticate": 'Bearer error="invalid_token", error_description="Jwt expired at '
        + '2026-12-06T17:00:00Z", error_uri="https://tools.ietf.org/html/rfc6750#section-3.1"', "Content-Length": 0 });
      response.end();
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.after(() => server.close());
    const a2 = createClient({ baseUrl: "http://127.0.0.1:" + server.address().port + "/a2",
      headers: { Authorization: "Bearer expired" } });
    t.after(() => a2.close());

    await assert.rejects(a2.push("chat", "lobby", [message("hi")]),
      { code: "UNAUTHORIZED", status: 401, message: "HTTP 401 Unauthorized: Jwt expired at 2026-12-06T17:00:00Z" });
    const view = await until(a2.session("chat", "lobby"), (v) => v.status === "error" && v);
    assert.equal(view.error.message, "HTTP 401 Unauthorized: Jwt expired at 2026-12-06T17:00:00Z");
  });

test("the CSRF token is read from the XSRF-TOKEN cookie", async (t) => {
  const seen = [];
  const server = http.createServer((request, response) => {
    seen.push(request.headers["x-xsrf-token"]);
    response.writeHead(403, { "Content-Type": "application/json" });
    response.end(JSON.stringify({ error: { code: "FORBIDDEN", message: "no" } }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  globalThis.document = { cookie: "JSESSIONID=x; XSRF-TOKEN=abc%3D%3D; other=1" };
  t.after(() => delete globalThis.document);
  const a2 = createClient({ baseUrl: "http://127.0.0.1:" + server.address().port + "/a2" });
  t.after(() => a2.close());
  await assert.rejects(a2.push("chat", "lobby", [message("hi")]), { code: "FORBIDDEN", status: 403 });
  assert.deepEqual(seen, ["abc=="]);
});


/** A message of about `bytes` bytes. */
function large(bytes) {
  return message("x".repeat(bytes));
}

for (const transport of ["sse", "socket"]) {
  test("a push over a2.web.max-push-bytes rejects with PAYLOAD_TOO_LARGE, stores nothing, and the session's views stay live ("
    + transport + ")", { skip: NO_SERVER || (transport === "socket" && NO_WEBSOCKET), timeout: PATIENCE }, async (t) => {
    const a2 = client(t, { transport });
    const id = sessionId("too-large-" + transport);
    const room = a2.session("chat", id);
    const bystander = a2.session("chat", sessionId("bystander-" + transport));
    await until(room, (v) => v.status === "live");
    await until(bystander, (v) => v.status === "live");
    let drops = 0;
    bystander.on("status", (status) => { if (status === "reconnecting") drops++; });

    // over the limit (256 KiB): the server reads the frame and answers it with an error
    const failed = next(room, "failed");
    await assert.rejects(room.push([large(300 * 1024)]), { code: "PAYLOAD_TOO_LARGE", status: 413 });
    assert.equal((await failed)[0].events.length, 1, "its pending event is withdrawn");
    assert.equal(drops, 0, "the socket stayed open");
    // over twice the limit: a server closes a socket for such a frame (1009), once; the next goes over HTTP
    await assert.rejects(room.push([large(600 * 1024)]), { code: "PAYLOAD_TOO_LARGE", status: 413 });
    await until(bystander, (v) => v.status === "live", "the other view live again");
    const afterFirst = drops;
    assert.ok(afterFirst <= 1, "the other view reconnected " + afterFirst + " times");
    await assert.rejects(room.push([large(600 * 1024)]), { code: "PAYLOAD_TOO_LARGE", status: 413 });
    assert.equal(drops, afterFirst, "a frame that large is not sent on a socket again");

    await room.push([message("small")]);
    await bystander.push([message("still here")]);
    await until(room, (v) => sent(v).length === 1 && !v.pending.length && v.status === "live", "the small message");
    await until(bystander, (v) => sent(v).length === 1 && !v.pending.length && v.status === "live", "the other view's message");
    assert.deepEqual((await messages("chat", id)).map((e) => e.payload.text), ["small"]);
  });
}

test("a push answered with a page that is not JSON (a login page after a redirect) rejects with UNEXPECTED_RESPONSE, sent once",
  { timeout: PATIENCE }, async (t) => {
    // Spring Security's form login: the expired session's push is redirected to the login page, which fetch follows
    let pushes = 0;
    const s = http.createServer((request, response) => {
      if (request.method === "POST") {
        pushes++;
        response.writeHead(302, { Location: "/login" });
        response.end();
      } else {
        response.writeHead(200, { "Content-Type": "text/html;charset=UTF-8" });
        response.end("<!DOCTYPE html>\n<html><body><form action=\"/login\">Please sign in</form></body></html>\n");
      }
    });
    await new Promise((resolve) => s.listen(0, "127.0.0.1", resolve));
    t.after(() => {
      s.closeAllConnections();
      s.close();
    });
    const a2 = createClient({ baseUrl: "http://127.0.0.1:" + s.address().port + "/a2", backoff: { initial: 20, max: 100 } });
    t.after(() => a2.close());

    await assert.rejects(a2.push("chat", "lobby", [message("hi")]), (error) => {
      assert.equal(error.code, "UNEXPECTED_RESPONSE");
      assert.match(error.message, /text\/html/);
      assert.match(error.message, /\/login/);
      return true;
    });
    assert.equal(pushes, 1, "not sent again: it would be answered the same");
  });
