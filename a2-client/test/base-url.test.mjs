// A baseUrl that misses A2 (a servlet context path left out, a proxy's prefix, a typo): the server's own
// 404, not A2's, was reported as "HTTP 404" alone. It says what was asked and that the answer was not A2's;
// A2's own errors keep their code and message.
import { test } from "node:test";
import assert from "node:assert/strict";
import { A2Error } from "../src/client.js";
import { client, message, NO_SERVER, NO_WEBSOCKET, SERVER, sessionId, until } from "./support.mjs";

/** The error of a request that missed A2: 404 NOT_FOUND, naming the request and baseUrl. */
function missedA2(error, request, base) {
  assert.ok(error instanceof A2Error, String(error));
  assert.equal(error.code, "NOT_FOUND");
  assert.equal(error.status, 404);
  assert.ok(error.message.startsWith(request + " answered 404"), error.message);
  assert.match(error.message, /not from A2/);
  assert.ok(error.message.includes("Check baseUrl (" + JSON.stringify(base) + ")"), error.message);
  return true;
}

test("a push to a baseUrl where A2 is not says what it asked, that the 404 was not A2's, and to check baseUrl",
  { skip: NO_SERVER }, async (t) => {
    const base = SERVER + "/app/a2";   // as a page that left the context path in where there is none
    const a2 = client(t, { baseUrl: base });
    const id = sessionId("wrong-base");
    await assert.rejects(a2.push("chat", id, [message("lost")]),
      (error) => missedA2(error, "POST " + base + "/chat/sessions/" + id + "/events", base));
  });

test("a stream's view of a baseUrl where A2 is not fails with the request and the hint", { skip: NO_SERVER }, async (t) => {
  const base = SERVER + "/app/a2";
  const id = sessionId("wrong-base-stream");
  const room = client(t, { baseUrl: base }).session("chat", id);
  const view = await until(room, (v) => v.status === "error" && v, "the view's error");
  missedA2(view.error, "GET " + base + "/chat/sessions/" + id + "/stream?after=0", base);
});

test("a socket's view of a baseUrl where A2 is not fails with the probe's request and the hint",
  { skip: NO_SERVER || NO_WEBSOCKET }, async (t) => {
    const base = SERVER + "/app/a2";
    const room = client(t, { baseUrl: base, transport: "socket" }).session("chat", sessionId("wrong-base-socket"));
    const view = await until(room, (v) => v.status === "error" && v, "the view's error");
    missedA2(view.error, "GET " + base + "/chat/socket", base);
  });

test("A2's own 404s keep their code and message", { skip: NO_SERVER }, async (t) => {
  const id = sessionId("a2s-own-404");
  // under A2's base path, a path it has no route for: A2's NOT_FOUND, in its own words
  const nested = client(t, { baseUrl: SERVER + "/a2/v2" });
  await assert.rejects(nested.push("chat", id, [message("lost")]), (error) => {
    assert.equal(error.code, "NOT_FOUND");
    assert.equal(error.status, 404);
    assert.doesNotMatch(error.message, /not from A2|baseUrl/);
    assert.doesNotMatch(error.message, /^HTTP 404/);
    return true;
  });
  await assert.rejects(client(t).push("no-such-contract", id, [message("lost")]), (error) => {
    assert.equal(error.code, "UNKNOWN_CONTRACT");
    assert.match(error.message, /no-such-contract/);
    assert.doesNotMatch(error.message, /not from A2/);
    return true;
  });
});
