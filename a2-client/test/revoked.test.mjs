// A caller the server's authorizer stops letting read a session (removed from a room): the server ends his
// stream, or his socket subscription with an error frame, and his views must say FORBIDDEN once and stop, their
// presence no longer kept alive (each write would be refused and told again), until the page reconnects them.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createClient } from "../src/client.js";
import { PATIENCE, until } from "./support.mjs";

const TTL = 3000;   // a keep-alive every second, on the test's mocked interval timer

/** Lets every callback and request already due run (a timer's effects, a fetch started): no waiting on time. */
async function settle() {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A server that lets the caller read until `revoke()`: then it ends the open stream, as A2 does when its
 * authorizer no longer lets the caller read, and refuses the stream and presence writes with 403 until
 * `restore()`.
 */
async function revokingServer(t) {
  let allowed = true;
  const open = new Set();
  const server = http.createServer((request, response) => {
    if (!allowed) {
      response.writeHead(403, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ error: { code: "FORBIDDEN", message: "'bob' may not read on session 'lobby'" } }));
      return;
    }
    if (request.method === "GET" && request.url.includes("/stream")) {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.write("event: presence\ndata: " + JSON.stringify({ snapshot: { participants: {} }, now: Date.now() }) + "\n\n");
      open.add(response);
      response.on("close", () => open.delete(response));
      return;
    }
    request.resume().on("end", () => {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ patches: [], now: Date.now() }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    base: "http://127.0.0.1:" + server.address().port + "/a2",
    revoke() {
      allowed = false;
      for (const response of open) response.end(":the caller may no longer read this session\n\n");
    },
    restore() {
      allowed = true;
    },
  };
}

test("a stream the server ends because the caller may no longer read fails the view with FORBIDDEN once, "
  + "without reconnecting in a loop or keeping its presence alive; reconnect() brings both back", { timeout: PATIENCE }, async (t) => {
  t.mock.timers.enable({ apis: ["setInterval"] });
  const server = await revokingServer(t);
  const calls = [];
  const fetch = (url, init) => {
    calls.push((init?.method ?? "GET") + " " + new URL(url).pathname);
    return globalThis.fetch(url, init);
  };
  const a2 = createClient({ baseUrl: server.base, participant: "bob", presenceTtl: TTL, fetch, backoff: { initial: 20, max: 50 } });
  t.after(() => a2.close());
  const room = a2.session("chat", "lobby");
  const reported = [];
  room.on("error", (error) => reported.push(error.code));
  await until(room, (v) => v.status === "live", "the view live");
  await room.setPresence({ online: true });
  t.mock.timers.tick(TTL / 3);
  await settle();
  const puts = () => calls.filter((c) => c.startsWith("PUT")).length;
  assert.equal(puts(), 2, "the write and one keep-alive: " + JSON.stringify(calls));

  server.revoke();
  const view = await until(room, (v) => v.status === "error" && v, "the view's error");
  assert.equal(view.error.code, "FORBIDDEN");
  assert.equal(view.error.status, 403);
  const streams = calls.filter((c) => c.includes("/stream")).length;
  const written = puts();
  t.mock.timers.tick(TTL * 2);
  await settle();
  assert.equal(puts(), written, "no keep-alive of a view that may no longer read: " + JSON.stringify(calls));
  assert.equal(calls.filter((c) => c.includes("/stream")).length, streams, "no reconnect until the page asks");
  // the stream's end is a NETWORK error while the view reconnects, as any end of a stream; the refusal is told once
  assert.deepEqual(reported.filter((code) => code !== "NETWORK"), ["FORBIDDEN"], "told once: " + reported);

  server.restore();
  room.reconnect();
  await until(room, (v) => v.status === "live", "the view live again");
  await settle();
  assert.equal(puts(), written + 1, "the kept presence written again at once");
  t.mock.timers.tick(TTL / 3);
  await settle();
  assert.equal(puts(), written + 2, "and kept alive again");
});

/** Sockets the test plays the server of: each answers a subscribe frame as A2 does, and sends what the test says. */
function scriptedSockets() {
  const opened = [];
  class ScriptedSocket {
    constructor(url) {
      this.url = url;
      this.sent = [];
      opened.push(this);
      setTimeout(() => this.onopen?.(), 0);
    }
    send(text) {
      const frame = JSON.parse(text);
      this.sent.push(frame);
      if (frame.type === "subscribe") this.receive({ type: "subscribed", session: frame.session, head: 0 });
    }
    receive(frame) {
      setTimeout(() => this.onmessage?.({ data: JSON.stringify(frame) }), 0);
    }
    close() {
      this.closed = true;
    }
  }
  return { ScriptedSocket, opened };
}

test("a socket subscription the server ends with FORBIDDEN fails that session's views once and stops keeping their "
  + "presence alive; the socket's other sessions go on", { timeout: PATIENCE }, async (t) => {
  t.mock.timers.enable({ apis: ["setInterval"] });
  const { ScriptedSocket, opened } = scriptedSockets();
  const a2 = createClient({ baseUrl: "http://127.0.0.1:9/a2", transport: "socket", WebSocket: ScriptedSocket,
    participant: "bob", presenceTtl: TTL });
  t.after(() => a2.close());
  const lobby = a2.session("chat", "lobby");
  const hall = a2.session("chat", "hall");
  const reported = [];
  lobby.on("error", (error) => reported.push(error.code));
  await until(lobby, (v) => v.status === "live", "the lobby live");
  await until(hall, (v) => v.status === "live", "the hall live");
  await lobby.setPresence({ online: true });
  await hall.setPresence({ online: true });
  const socket = opened[0];
  const frames = (type, session) => socket.sent.filter((f) => f.type === type && f.session === session).length;

  socket.receive({ type: "error", session: "lobby", error: { code: "FORBIDDEN", message: "'bob' may not read on session "
    + "'lobby' of contract 'chat'; the subscription ended" }, unsubscribed: true });
  const view = await until(lobby, (v) => v.status === "error" && v, "the lobby's error");
  assert.equal(view.error.code, "FORBIDDEN");
  assert.deepEqual(reported, ["FORBIDDEN"], "told once");

  const lobbyWrites = frames("presence", "lobby");
  const hallWrites = frames("presence", "hall");
  t.mock.timers.tick(TTL);
  await settle();
  assert.equal(frames("presence", "lobby"), lobbyWrites, "no keep-alive of the lobby: " + JSON.stringify(socket.sent));
  assert.ok(frames("presence", "hall") > hallWrites, "the hall's presence is kept alive");
  assert.equal(frames("subscribe", "lobby"), 1, "the lobby is not subscribed again until the page asks");

  socket.receive({ type: "events", session: "hall", events: [{ index: 1, id: "e-1", type: "message.sent",
    payload: { text: "hi", author: "ann" }, createdAt: new Date().toISOString() }] });
  await until(hall, (v) => v.events.length === 1, "the hall's event");
  assert.equal(hall.view.status, "live");
});
