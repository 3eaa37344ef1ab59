import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import http from "node:http";
import { createClient } from "../src/client.js";
import { client, eventually, message, next, NO_SERVER, NO_WEBSOCKET, PATIENCE, PRESENCE_TTL, proxy, SERVER, sessionId, until }
  from "./support.mjs";

const SHORT_TTL = PRESENCE_TTL > 10000 ? "the server's presence TTL is over 10 s (A2_PRESENCE_TTL_MS): run with a2.presence.ttl=3s" : false;

/** Collects the presence patches a watcher sees for one participant. */
function watch(room, participant) {
  const patches = [];
  room.on("presence", (presence, update) => {
    for (const patch of update.patches || []) if (patch.participant === participant) patches.push(patch);
  });
  return patches;
}

test("presence is kept alive past the server's TTL while the view is open, and removed when it closes", { skip: NO_SERVER || SHORT_TTL }, async (t) => {
  const id = sessionId("presence");
  const watcher = client(t, { participant: "watcher" }).session("chat", id);
  await until(watcher, (v) => v.status === "live");
  const patches = watch(watcher, "ann");

  const page = client(t, { participant: "ann" }).session("chat", id);
  await page.setPresence({ online: true });
  await until(watcher, (v) => v.presence.ann && v.presence.ann.online, "ann online");
  // a write every third of the TTL: wait until the writes span three TTLs; none may have expired
  await until(watcher, () => {
    const online = patches.filter((p) => p.field === "online");
    return online.length >= 2 && Date.parse(online[online.length - 1].at) - Date.parse(online[0].at) >= 3 * PRESENCE_TTL;
  }, "keep-alive writes spanning three TTLs");
  assert.deepEqual(patches.filter((p) => p.value === null), [], "no expiry while the page is open");
  assert.equal(watcher.getSnapshot().presence.ann.online.value, true);

  page.close();
  await until(watcher, (v) => !v.presence.ann, "ann gone");
  assert.equal(patches[patches.length - 1].value, null);
});

test("presence expires when the page goes without a word (the process is killed)", { skip: NO_SERVER || SHORT_TTL }, async (t) => {
  const id = sessionId("killed");
  const watcher = client(t, { participant: "watcher" }).session("chat", id);
  await until(watcher, (v) => v.status === "live");
  const patches = watch(watcher, "bob");

  const script = `
    import { createClient } from ${JSON.stringify(new URL("../src/client.js", import.meta.url).href)};
    const a2 = createClient({ baseUrl: ${JSON.stringify(SERVER + "/a2")}, participant: "bob", presenceTtl: ${PRESENCE_TTL} });
    await a2.session("chat", ${JSON.stringify(id)}).setPresence({ online: true, typing: true });
    console.log("written");`;
  const page = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  t.after(() => page.kill("SIGKILL"));
  await until(watcher, (v) => v.presence.bob && v.presence.bob.online && v.presence.bob.typing, "bob online and typing");
  // the page is alive past a TTL: its keep-alive holds it
  await until(watcher, () => {
    const online = patches.filter((p) => p.field === "online");
    return online.length >= 2 && Date.parse(online[online.length - 1].at) - Date.parse(online[0].at) >= PRESENCE_TTL;
  }, "keep-alive writes spanning a TTL");
  const killedAt = Date.now();
  page.kill("SIGKILL");
  await until(watcher, (v) => !v.presence.bob, "bob to expire");
  assert.ok(Date.now() - killedAt >= PRESENCE_TTL / 3, "gone by expiry, not by a goodbye");
  assert.deepEqual(patches.filter((p) => p.value === null).map((p) => p.field).sort(), ["online", "typing"]);
});

for (const transport of ["sse", "socket"]) {
  test("after a reconnect the view's presence drops a participant who left meanwhile (" + transport + ")",
    { skip: NO_SERVER || (transport === "socket" && NO_WEBSOCKET) }, async (t) => {
      const network = await proxy(t);
      const id = sessionId("presence-reconnect-" + transport);
      const watcher = client(t, { baseUrl: network.url + "/a2", transport, participant: "watcher" }).session("chat", id);
      await until(watcher, (v) => v.status === "live");
      const ann = client(t, { participant: "ann" }).session("chat", id);
      await ann.setPresence({ online: true });
      await until(watcher, (v) => v.presence.ann, "ann online");
      network.hold(transport === "sse" ? /^GET [^ ]*\/stream/ : /^GET [^ ]*\/socket/);
      network.dropAll();
      await until(watcher, (v) => v.status === "reconnecting");
      ann.close();   // removes ann's fields while the watcher is away
      const deadline = Date.now() + PATIENCE;
      while ((await (await fetch(SERVER + "/a2/chat/sessions/" + id + "/presence")).json()).participants.ann) {
        assert.ok(Date.now() < deadline, "ann's goodbye was not stored within " + PATIENCE + " ms");
        await new Promise((resolve) => setTimeout(resolve, 20));   // asked again, until the deadline
      }
      network.release();
      await until(watcher, (v) => v.status === "live" && !v.presence.ann, "the watcher back, without ann");
    });
}

/**
 * A fetch that holds the presence writes `hold` picks until `release()`, as requests still on their way
 * to the server (on another connection) while later ones arrive: the page's abort no longer stops them.
 */
function lateWrites(hold) {
  const held = [];
  const fetchLate = (url, init = {}) => {
    if (init.method === "PUT" && hold(JSON.parse(init.body))) {
      return new Promise((resolve) => held.push(() => resolve(fetch(url, Object.assign({}, init, { signal: undefined })))));
    }
    return fetch(url, init);
  };
  return { fetch: fetchLate, held, release: () => held.splice(0).forEach((send) => send()) };
}

async function storedPresence(id) {
  return (await (await fetch(SERVER + "/a2/chat/sessions/" + id + "/presence")).json()).participants;
}

test("a typing write that reaches the server after the push that cleared it does not make it true again", { skip: NO_SERVER }, async (t) => {
  const id = sessionId("late-typing");
  const network = lateWrites((body) => body.values.typing === true);
  const ann = client(t, { participant: "ann", fetch: network.fetch }).session("chat", id);
  await until(ann, (v) => v.status === "live");
  const typing = ann.setPresence({ typing: true });   // a keystroke, its PUT still on its way
  await eventually(() => network.held.length === 1, "the typing write to be sent");
  await ann.push([{ type: "message.sent", payload: { text: "hi", author: "ann", thread: "ann" } }], { presence: { typing: false } });
  assert.equal((await storedPresence(id)).ann.typing.value, false);
  network.release();
  await typing;   // answered: the server has taken it
  assert.equal((await storedPresence(id)).ann.typing.value, false, "the earlier typing: true, arriving late, undid the push's typing: false");
});

test("a tab that closes leaves the presence another tab of the same participant keeps alive", { skip: NO_SERVER }, async (t) => {
  const id = sessionId("two-tabs");
  const watcher = client(t, { participant: "watcher" }).session("chat", id);
  await until(watcher, (v) => v.status === "live");
  // two tabs of ann's (two clients of this process, which share BroadcastChannels as a browser's tabs do)
  const removals = [];
  const recording = (url, init) => {
    if (init && init.method === "PUT" && String(url).endsWith("/presence")) {
      const body = JSON.parse(init.body);
      if (body.values.online === null) removals.push(body);
    }
    return fetch(url, init);
  };
  const first = client(t, { participant: "ann", fetch: recording }).session("chat", id);
  const second = client(t, { participant: "ann" }).session("chat", id);
  await first.setPresence({ online: true });
  await second.setPresence({ online: true });
  await until(watcher, (v) => v.presence.ann && v.presence.ann.online, "ann online");

  first.close();   // one tab of two goes: ann is still here
  // the second tab has heard the first leave by the time a push of its own is answered
  await second.push([message("still here", "ann")]);
  second.close();  // the last goes: ann leaves
  await until(watcher, (v) => !v.presence.ann, "ann gone once her last tab closed");
  assert.deepEqual(removals, [], "the first tab to close removed ann's online while her other tab showed it");
});

test("a presence write that reaches the server after the view's goodbye does not bring the participant back", { skip: NO_SERVER }, async (t) => {
  const id = sessionId("late-goodbye");
  const network = lateWrites((body) => body.values.typing === true);
  const watcher = client(t, { participant: "watcher" }).session("chat", id);
  const ann = client(t, { participant: "ann", fetch: network.fetch }).session("chat", id);
  await until(ann, (v) => v.status === "live");
  await ann.setPresence({ online: true });
  await until(watcher, (v) => v.presence.ann, "ann online");
  const typing = ann.setPresence({ typing: true });   // its PUT still on its way as the view closes
  await eventually(() => network.held.length === 1, "the typing write to be sent");
  ann.close();   // the goodbye: every kept field removed
  await until(watcher, (v) => !v.presence.ann, "ann's goodbye");
  network.release();
  await typing;   // answered: the server has taken it
  assert.equal((await storedPresence(id)).ann, undefined, "a write sent before the goodbye brought ann back until her TTL ran out");
});

test("closing a view removes the typing: false its push wrote, not only the fields it kept alive", { skip: NO_SERVER }, async (t) => {
  const id = sessionId("goodbye-typing");
  const watcher = client(t, { participant: "watcher" }).session("chat", id);
  await until(watcher, (v) => v.status === "live");
  const ann = client(t, { participant: "ann" }).session("chat", id);
  await ann.setPresence({ online: true, typing: true });
  await ann.push([{ type: "message.sent", payload: { text: "hi", author: "ann", thread: "ann" } }], { presence: { typing: false } });
  await until(watcher, (v) => v.presence.ann && v.presence.ann.typing && v.presence.ann.typing.value === false, "ann not typing");
  ann.close();
  // the goodbye is one write: when it has removed online, it has removed every field of ann's
  await until(watcher, (v) => !(v.presence.ann && v.presence.ann.online), "ann's goodbye");
  assert.equal(watcher.getSnapshot().presence.ann, undefined, "ann stays, not typing, until her TTL runs out");
});

test("a view back after an outage longer than the server's TTL writes its kept presence again at once", { skip: NO_SERVER || SHORT_TTL }, async (t) => {
  const network = await proxy(t);
  const id = sessionId("presence-back");
  const watcher = client(t, { participant: "watcher" }).session("chat", id);
  await until(watcher, (v) => v.status === "live");
  // ann's keep-alive would come long after this test's patience: only her return can write her again
  const ann = client(t, { baseUrl: network.url + "/a2", participant: "ann", presenceTtl: 100 * PATIENCE }).session("chat", id);
  await until(ann, (v) => v.status === "live");
  await ann.setPresence({ online: true });
  await until(watcher, (v) => v.presence.ann, "ann online");
  network.hold(/^GET [^ ]*\/stream/);
  network.dropAll();
  await until(ann, (v) => v.status === "reconnecting");
  await until(watcher, (v) => !v.presence.ann, "ann to expire while she is away");
  network.release();
  await until(ann, (v) => v.status === "live");
  await until(watcher, (v) => v.presence.ann && v.presence.ann.online, "ann online again");
});

test("two views of one session on a page: the latest writer keeps a field alive, and closing removes only its own",
  { skip: NO_SERVER || SHORT_TTL }, async (t) => {
    const id = sessionId("two-views");
    const writes = [];
    const page = client(t, {
      participant: "erin",
      fetch: (url, init) => {
        if (init.method === "PUT") writes.push(JSON.parse(init.body).values);
        return fetch(url, init);
      },
    });
    const watcher = client(t, { participant: "watcher" }).session("chat", id);
    const list = page.session("chat", id);       // a component's view
    const composer = page.session("chat", id);   // another component's view of the same session
    await list.setPresence({ typing: true });
    await composer.setPresence({ typing: false });
    // the composer's write and its first keep-alive: the list's keep-alive, a third of the TTL apart too, came between
    await eventually(() => writes.filter((w) => w.typing === false).length >= 2, "the composer's keep-alive");
    const after = writes.slice(writes.findIndex((w) => w.typing === false));
    assert.deepEqual(after.filter((w) => w.typing === true), [], "the list's old value was not written again: " + JSON.stringify(writes));
    await until(watcher, (v) => v.presence.erin && v.presence.erin.typing && v.presence.erin.typing.value === false, "erin not typing");
    composer.close();
    await until(watcher, (v) => v.presence.erin === undefined, "erin's typing removed");
    assert.equal(list.getSnapshot().status, "live", "the list view goes on");
  });

for (const transport of ["sse", "socket"]) {
  test("a participant on two devices, one's clock a minute behind, sees each device's writes win in the order they are made ("
    + transport + ")", { skip: NO_SERVER || (transport === "socket" && NO_WEBSOCKET) }, async (t) => {
    const id = sessionId("two-clocks-" + transport);
    const behind = client(t, { participant: "ann", transport, now: () => Date.now() - 60000 }).session("chat", id);
    const onTime = client(t, { participant: "ann", transport }).session("chat", id);
    // a device knows the server's clock once its view has the presence snapshot
    await Promise.all([next(behind, "presence"), next(onTime, "presence")]);
    const write = async (device, typing) => {
      await device.setPresence({ typing }, { keepAlive: false });
      // over the socket a presence frame has no answer: the ack of a push sent after it on the same socket does
      if (transport === "socket") await device.push([message("after typing " + typing, "ann")]);
      return (await storedPresence(id)).ann.typing.value;
    };
    assert.equal(await write(onTime, true), true);
    assert.equal(await write(behind, false), false, "the write of the device whose clock is behind lost to the earlier one of the other");
    assert.equal(await write(onTime, true), true);
    assert.equal(await write(behind, false), false, "the write of the device whose clock is behind lost to the earlier one of the other");
  });
}

for (const transport of ["sse", "socket"]) {
  test("a presence field the server refuses is no longer kept: the view's other fields stay alive without it ("
    + transport + ")", { skip: NO_SERVER || SHORT_TTL || (transport === "socket" && NO_WEBSOCKET) }, async (t) => {
    const id = sessionId("refused-field-" + transport);
    const watcher = client(t, { participant: "watcher" }).session("chat", id);
    await until(watcher, (v) => v.status === "live");
    const patches = watch(watcher, "ann");
    const page = client(t, { participant: "ann", transport }).session("chat", id);
    const reported = [];
    page.on("error", (error) => reported.push(error.code));
    await until(page, (v) => v.status === "live");
    await page.setPresence({ online: true });
    if (transport === "sse") {
      await assert.rejects(page.setPresence({ mood: "happy" }), { code: "INVALID_PAYLOAD" });
    } else {
      await page.setPresence({ mood: "happy" });   // a presence frame has no answer: its refusal is an error frame
    }
    // the view's error event on either transport, so that usePresence, which does not await, tells it too
    await eventually(() => reported.includes("INVALID_PAYLOAD"), "the refusal");
    // the keep-alives carry online alone, and are stored: writes spanning two TTLs, none expired
    const after = patches.length;
    await until(watcher, () => {
      const online = patches.slice(after).filter((p) => p.field === "online");
      return online.length >= 2 && Date.parse(online[online.length - 1].at) - Date.parse(online[0].at) >= 2 * PRESENCE_TTL;
    }, "keep-alive writes of online spanning two TTLs");
    assert.deepEqual(patches.filter((p) => p.value === null), [], "ann was never gone while her page was open");
    assert.deepEqual(reported.filter((code) => code === "INVALID_PAYLOAD"), ["INVALID_PAYLOAD"],
      "the refusal is told once, not again at every keep-alive");
    page.close();
    await until(watcher, (v) => !v.presence.ann, "the goodbye, without mood, removes ann");
  });
}

/**
 * A server that keeps a stream open with a presence snapshot and answers presence writes, telling its
 * clock (`now`) as `serverNow()` answers it, and records the writes; `refuse` answers them with that error.
 */
async function clockServer(t, serverNow, refuse = null) {
  const writes = [];
  const server = http.createServer((request, response) => {
    if (request.method === "GET" && request.url.includes("/stream")) {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.write("event: presence\ndata: " + JSON.stringify({ snapshot: { participants: {} }, now: serverNow() }) + "\n\n");
      return;
    }
    let body = "";
    request.on("data", (chunk) => body += chunk).on("end", () => {
      writes.push(JSON.parse(body));
      if (refuse) {
        response.writeHead(refuse.status, { "Content-Type": "application/json" });
        response.end(JSON.stringify({ error: { code: refuse.code, message: "refused by the test's server" } }));
        return;
      }
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ patches: [], now: serverNow() }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { base: "http://127.0.0.1:" + server.address().port + "/a2", writes };
}

test("a presence write's at is on the server's clock as the server tells it, and never goes back when that clock does", async (t) => {
  const hour = 3600000;
  let serverAhead = hour;
  const { base, writes } = await clockServer(t, () => Date.now() + serverAhead);
  const a2 = createClient({ baseUrl: base, participant: "ann" });
  t.after(() => a2.close());
  const room = a2.session("chat", "lobby");
  await next(room, "presence");
  await room.setPresence({ online: true }, { keepAlive: false });
  assert.ok(writes[0].at > Date.now() + hour / 2, "at " + writes[0].at + " is on the page's clock, not the server's, an hour ahead");
  serverAhead = -hour;   // the server's clock set back: its answers now say so
  await room.setPresence({ typing: true }, { keepAlive: false });   // its answer tells the clock set back
  await room.setPresence({ typing: false }, { keepAlive: false });
  assert.ok(writes[1].at > writes[0].at && writes[2].at > writes[1].at,
    "the page's stamps went back: " + writes.map((w) => w.at).join(", "));
});

test("while the server is down, a view's presence keep-alive reports one NETWORK error per outage, not one per write", { skip: NO_SERVER }, async (t) => {
  const network = await proxy(t);
  const id = sessionId("keep-alive-outage");
  const writes = { failed: 0, answered: 0 };
  const counting = async (url, init = {}) => {
    if (init.method !== "PUT") return fetch(url, init);
    try {
      const response = await fetch(url, init);
      writes.answered++;
      return response;
    } catch (e) {
      writes.failed++;
      throw e;
    }
  };
  // a keep-alive every 250 ms
  const room = client(t, { baseUrl: network.url + "/a2", participant: "ann", presenceTtl: 750, fetch: counting }).session("chat", id);
  const ofStatus = new Set();   // the view's own reconnect reporting, not what this test is about
  room.on("status", (status, error) => error && ofStatus.add(error));
  const reported = [];
  room.on("error", (error) => ofStatus.has(error) || reported.push(error.code));
  await until(room, (v) => v.status === "live");
  await room.setPresence({ online: true });

  network.down();
  await eventually(() => writes.failed >= 3, "three keep-alive writes to fail");
  assert.deepEqual(reported, ["NETWORK"], "one report for the outage");
  network.up();
  const answered = writes.answered;
  await eventually(() => writes.answered > answered, "a keep-alive write to get through");
  network.down();
  const failed = writes.failed;
  await eventually(() => writes.failed >= failed + 3, "three keep-alive writes to fail again");
  assert.deepEqual(reported, ["NETWORK", "NETWORK"], "one report for each outage");
});

test("a keep-alive write the server refuses is reported every time", async (t) => {
  const { base, writes } = await clockServer(t, () => Date.now(), { status: 403, code: "FORBIDDEN" });
  const a2 = createClient({ baseUrl: base, participant: "ann", presenceTtl: 750 });
  t.after(() => a2.close());
  const room = a2.session("chat", "lobby");
  const reported = [];
  room.on("error", (error) => reported.push(error.code));
  await assert.rejects(room.setPresence({ online: true }), { code: "FORBIDDEN" });
  // the write's own refusal, then each keep-alive's
  await eventually(() => reported.length >= 4, "the write and three refused keep-alive writes to be reported");
  assert.deepEqual([...new Set(reported)], ["FORBIDDEN"]);
  assert.ok(writes.length >= 4);
});
