import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createClient } from "../src/client.js";
import { client, eventually, history, message, messages, next, NO_SERVER, NO_WEBSOCKET, PATIENCE, sent, sessionId, until } from "./support.mjs";

test("one socket carries many sessions, each view seeing only its own events", { skip: NO_SERVER || NO_WEBSOCKET }, async (t) => {
  let opened = 0;
  class CountedWebSocket extends WebSocket {
    constructor(url) {
      super(url);
      opened++;
    }
  }
  const a2 = client(t, { transport: "socket", WebSocket: CountedWebSocket });
  const rooms = Array.from({ length: 8 }, (_, i) => a2.session("chat", sessionId("many-" + i), { state: "summary" }));
  await Promise.all(rooms.map((room) => until(room, (v) => v.status === "live")));
  await Promise.all(rooms.map((room, i) => room.push([message("for room " + i), message("again " + i)])));
  for (const [i, room] of rooms.entries()) {
    const view = await until(room, (v) => sent(v).length === 2 && !v.pending.length && v.state && v.state.state.messages === 2 && v);
    assert.deepEqual(sent(view).map((e) => e.payload.text), ["for room " + i, "again " + i]);
    assert.equal((await messages("chat", room.id)).length, 2);
  }
  assert.equal(opened, 1, "one socket for every view of the contract");

  // a view closed stops its subscription; the others go on, on the same socket
  rooms[0].close();
  await rooms[1].push([message("still here")]);
  await until(rooms[1], (v) => sent(v).length === 3);
  assert.equal(opened, 1);
});

test("a subscription the server refuses fails that view only, with its code", { skip: NO_SERVER || NO_WEBSOCKET }, async (t) => {
  const a2 = client(t, { transport: "socket" });
  const good = a2.session("chat", sessionId("good"));
  const bad = a2.session("chat", "not/a/valid/id");
  const view = await until(bad, (v) => v.status === "error" && v);
  assert.equal(view.error.code, "INVALID_PAYLOAD");
  await until(good, (v) => v.status === "live");
  await good.push([message("fine")]);
  await until(good, (v) => sent(v).length === 1);
});

test("over the socket, a view whose state names no reducer fails with UNKNOWN_REDUCER, as over SSE, and the session's other views go on",
  { skip: NO_SERVER || NO_WEBSOCKET }, async (t) => {
    const a2 = client(t, { transport: "socket" });
    const id = sessionId("socket-reducer");
    const good = a2.session("chat", id, { state: "summary" });
    const typo = a2.session("chat", id, { state: "no-such-reducer" });
    const view = await until(typo, (v) => v.status === "error" && v, "the view to fail");
    assert.equal(view.error.code, "UNKNOWN_REDUCER");
    await good.push([message("fine")]);
    await until(good, (v) => sent(v).length === 1 && v.status === "live" && v.state && v.state.state.messages === 1,
      "the other view's message and state");
  });

test("over the socket, a state read cut by the network is read again", { skip: NO_SERVER || NO_WEBSOCKET }, async (t) => {
  let cutting = false;
  let cut = 0;
  const a2 = client(t, { transport: "socket", fetch: (url, init) => {
    if (cutting && String(url).includes("/state/")) {
      cut++;
      return Promise.reject(new TypeError("fetch failed"));
    }
    return fetch(url, init);
  } });
  const room = a2.session("chat", sessionId("socket-state-cut"), { state: "summary" });
  await room.push([message("before")]);
  await until(room, (v) => v.state && v.state.state.messages === 1, "the state of the first message");
  // the read after the next batch is cut; no batch comes after it (stop.requested writes nothing more)
  cutting = true;
  await room.push([{ type: "stop.requested", payload: { thread: "tester" } }]);
  await eventually(() => cut > 0 && !room.view.pending.length, "the state read to be cut");
  cutting = false;
  const view = await until(room, (v) => v.state && v.state.index === v.lastIndex && v, "the state as of the last event, read again");
  assert.equal(view.state.state.messages, 1);
});

for (const transport of ["sse", "socket"]) {
  test("two views of one session on one client both show its events and presence, and one closed leaves the other live ("
    + transport + ")", { skip: NO_SERVER || (transport === "socket" && NO_WEBSOCKET) }, async (t) => {
    const a2 = client(t, { transport });
    const id = sessionId("two-views-" + transport);
    const main = a2.session("chat", id);
    const seen = [];
    main.on("event", (event) => seen.push(event.index));
    await main.push([message("before the sidebar")]);
    await until(main, (v) => sent(v).length === 1 && !v.pending.length, "the first message in the main view");
    await main.setPresence({ online: true });
    await until(main, (v) => v.presence.tester, "the main view's presence");

    // a second component shows the same room: it needs the history the first has seen already
    const sidebar = a2.session("chat", id);
    await until(sidebar, (v) => sent(v).length === 1 && v.status === "live" && v.presence.tester, "the sidebar to show the history");
    // a third starts where the main view is: it needs nothing older, and has the presence as it is
    const badge = a2.session("chat", id, { after: main.getSnapshot().lastIndex });
    await until(badge, (v) => v.status === "live" && v.presence.tester, "the badge live, with the presence");
    assert.equal(sent(badge.getSnapshot()).length, 0);
    await main.push([message("seen by every view")]);
    for (const view of [main, sidebar, badge]) {
      await until(view, (v) => sent(v).some((e) => e.payload.text === "seen by every view") && !v.pending.length,
        "every view to show the second message");
    }
    assert.equal(sidebar.getSnapshot().presence.tester.online.value, true);
    const stored = await history("chat", id);
    await until(main, (v) => v.lastIndex >= stored[stored.length - 1].index, "the main view to reach the head");
    // the sample's consumers may append more meanwhile: every index from 1 once, in order, is the check
    assert.deepEqual(seen, seen.map((_, i) => i + 1), "the main view saw every index once, in order");

    main.close();
    badge.close();
    await client(t).push("chat", id, [message("after the others closed")]);
    const view = await until(sidebar, (v) => sent(v).length === 3 && v, "the sidebar to show the push after the others closed");
    assert.equal(view.status, "live");
  });
}

/** A server that refuses the caller: 401 on every HTTP call and on the socket's handshake. */
async function refusingServer(t) {
  const seen = { upgrades: 0, requests: [] };
  const server = http.createServer((request, response) => {
    seen.requests.push(request.method + " " + request.url);
    response.writeHead(401, { "Content-Type": "application/json" });
    response.end(JSON.stringify({ error: { code: "UNAUTHORIZED", message: "log in first" } }));
  });
  server.on("upgrade", (request, socket) => {
    seen.upgrades++;
    socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { base: "http://127.0.0.1:" + server.address().port + "/a2", seen };
}

test("over the socket, a server that answers 401 fails the view and rejects a push with UNAUTHORIZED, with a view or without",
  { skip: NO_WEBSOCKET, timeout: PATIENCE }, async (t) => {
    const { base, seen } = await refusingServer(t);
    const a2 = createClient({ baseUrl: base, transport: "socket", backoff: { initial: 50, max: 200 } });
    t.after(() => a2.close());
    const room = a2.session("chat", "lobby");
    const view = await until(room, (v) => v.status === "error" && v, "the view's error");
    assert.equal(view.error.code, "UNAUTHORIZED");

    const failed = next(room, "failed");
    await assert.rejects(room.push([message("hi")]), { code: "UNAUTHORIZED", status: 401 });
    assert.equal((await failed)[0].error.code, "UNAUTHORIZED", "its pending events are withdrawn");
    await assert.rejects(a2.push("chat", "hall", [message("hi")]), { code: "UNAUTHORIZED", status: 401 });
    assert.deepEqual(seen.requests.filter((r) => r.startsWith("POST")),
      ["POST /a2/chat/sessions/lobby/events", "POST /a2/chat/sessions/hall/events"], "each push sent once, not retried");
  });

/**
 * A server that takes a bearer token as Spring Security's resource server does: HTTP calls with it are answered,
 * without it 401; a WebSocket handshake (which cannot carry the client's headers) is refused 401.
 */
async function bearerServer(t) {
  const seen = { upgrades: 0, requests: [] };
  const server = http.createServer((request, response) => {
    const bearer = request.headers.authorization === "Bearer good";
    seen.requests.push(request.method + " " + request.url + (bearer ? " (bearer)" : ""));
    if (!bearer) {
      response.writeHead(401, { "WWW-Authenticate": "Bearer", "Content-Length": 0 });
      response.end();
      return;
    }
    let body = "";
    request.on("data", (chunk) => body += chunk);
    request.on("end", () => {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify(request.method === "POST"
        ? { events: JSON.parse(body).events.map((e, i) => ({ index: i + 1, id: e.id, type: e.type, payload: e.payload })) }
        : { events: [], head: 0 }));
    });
  });
  server.on("upgrade", (request, socket) => {
    seen.upgrades++;
    socket.end("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { base: "http://127.0.0.1:" + server.address().port + "/a2", seen };
}

test("over the socket, a bearer token in headers, which the handshake cannot carry, fails the view with UNAUTHORIZED "
  + "saying so, instead of trying the socket again for ever; pushes still go over HTTP with the token",
  { skip: NO_WEBSOCKET, timeout: PATIENCE }, async (t) => {
    const { base, seen } = await bearerServer(t);
    const a2 = createClient({ baseUrl: base, transport: "socket", headers: () => ({ Authorization: "Bearer good" }),
      backoff: { initial: 50, max: 200 } });
    t.after(() => a2.close());
    const room = a2.session("chat", "user-ann-1");
    const view = await until(room, (v) => v.status === "error" && v, "the view's error");
    assert.equal(view.error.code, "UNAUTHORIZED");
    assert.equal(view.error.status, 401);
    assert.match(view.error.message, /cannot send the client's headers.*transport 'sse'/);
    assert.ok(seen.requests.includes("GET /a2/chat/socket"),
      "the probe asked the socket's URL as the handshake did, without the headers: " + seen.requests);

    const stored = await room.push([message("hi")]);
    assert.equal(stored[0].index, 1, "the push went over HTTP, with the token");
    assert.ok(seen.requests.includes("POST /a2/chat/sessions/user-ann-1/events (bearer)"), String(seen.requests));
  });

test("over the socket, a page of an origin the server does not let open its socket fails its views with FORBIDDEN "
  + "naming a2.web.allowed-origins, instead of trying the socket again for ever; pushes still go over HTTP",
  { skip: NO_SERVER || NO_WEBSOCKET, timeout: PATIENCE }, async (t) => {
    // as a browser does for a page of another origin: its handshake and its requests carry the page's Origin
    const origin = "http://elsewhere.example";
    class ForeignSocket extends WebSocket {
      constructor(url, protocols) {
        super(url, { protocols, headers: { Origin: origin } });
      }
    }
    const foreignFetch = (url, init = {}) => fetch(url, Object.assign({}, init,
      { headers: Object.assign({}, init.headers, { Origin: origin }) }));
    const a2 = client(t, { transport: "socket", WebSocket: ForeignSocket, fetch: foreignFetch });
    const id = sessionId("foreign-origin");
    const room = a2.session("chat", id);
    const view = await until(room, (v) => v.status === "error" && v, "the view's error");
    assert.equal(view.error.code, "FORBIDDEN");
    assert.equal(view.error.status, 403);
    assert.match(view.error.message, /origin http:\/\/elsewhere\.example .*a2\.web\.allowed-origins/);

    const stored = await room.push([message("hi")]);
    assert.equal(stored[0].index, 1, "the push went over HTTP, which the socket's origin check does not cover");
    assert.equal((await messages("chat", id)).length, 1);
  });

/** Sockets the test opens and drops as a network would; each answers a subscribe frame as a server does. */
function droppableSockets() {
  const opened = [];
  class DroppableSocket {
    constructor(url) {
      this.url = url;
      this.sent = [];
      this.closed = false;
      opened.push(this);
    }
    send(text) {
      const frame = JSON.parse(text);
      this.sent.push(frame);
      if (frame.type === "subscribe") {
        setTimeout(() => this.onmessage?.({ data: JSON.stringify({ type: "subscribed", session: frame.session }) }), 0);
      }
    }
    close() {
      this.closed = true;
    }
    open() {
      this.onopen?.();
    }
    drop() {
      this.onclose?.({ code: 1006 });
    }
  }
  return { DroppableSocket, opened };
}

test("a view closed while its socket waits to reconnect leaves the socket of a view opened meanwhile in charge",
  { timeout: PATIENCE }, async (t) => {
    const { DroppableSocket, opened } = droppableSockets();
    const a2 = createClient({ baseUrl: "http://127.0.0.1:9/a2", transport: "socket", WebSocket: DroppableSocket,
      backoff: { initial: 100, max: 100 } });
    t.after(() => a2.close());
    const lobby = a2.session("chat", "lobby");
    opened[0].open();
    await until(lobby, (v) => v.status === "live", "the lobby live");
    opened[0].drop();   // the server restarts: the socket waits out its back-off before it connects again
    lobby.close();      // the page leaves the lobby meanwhile, and opens another room
    const hall = a2.session("chat", "hall");
    await eventually(() => opened.length === 2, "a socket for the hall");
    opened[1].open();
    await until(hall, (v) => v.status === "live", "the hall live");
    // the closed lobby's socket ends its back-off with nothing to reconnect for
    await new Promise((resolve) => setTimeout(resolve, 300));

    hall.close();
    assert.ok(opened[1].closed || opened[1].sent.some((f) => f.type === "unsubscribe" && f.session === "hall"),
      "closing the hall ends its subscription; frames sent: " + JSON.stringify(opened[1].sent));
    a2.close();
    assert.deepEqual(opened.map((s) => s.closed), [true, true], "a closed client leaves no socket open");
  });
