import { test } from "node:test";
import assert from "node:assert/strict";
import { client, message, messages, NO_SERVER, NO_WEBSOCKET, sent, sessionId, until } from "./support.mjs";

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
