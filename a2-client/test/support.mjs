// What the library's tests share: the server under test (A2_BASE_URL, started by the sample's
// ClientLibraryIntegrationTests), waits on a view's changes with a deadline, and a TCP proxy that can
// cut a connection after the server has answered.
import net from "node:net";
import { createClient } from "../src/client.js";

export const SERVER = process.env.A2_BASE_URL;
export const RESTART = process.env.A2_RESTART_URL;
export const PRESENCE_TTL = Number(process.env.A2_PRESENCE_TTL_MS || 60000);
export const HAS_WEBSOCKET = typeof WebSocket === "function";
export const NO_SERVER = SERVER ? false : "A2_BASE_URL is not set: run these through the sample's ClientLibraryIntegrationTests "
  + "(./mvnw -pl sample-app -am verify -Dtest=ClientLibraryIntegrationTests) or against a running sample";
export const NO_WEBSOCKET = HAS_WEBSOCKET ? false : "this Node has no WebSocket: use Node 22, or Node 20 with --experimental-websocket";
export const PATIENCE = 30000;

let sessions = 0;
/** A session id of its own for each test, so runs and tests never see each other's events. */
export function sessionId(name) {
  return name + "-" + process.pid + "-" + Date.now().toString(36) + "-" + (++sessions);
}

/** A client of the server under test, closed when the test ends. */
export function client(t, options = {}) {
  const c = createClient(Object.assign({ baseUrl: SERVER + "/a2", participant: "tester",
    backoff: { initial: 50, max: 500 }, presenceTtl: PRESENCE_TTL }, options));
  t.after(() => c.close());
  return c;
}

/** Resolves with the predicate's value once it is truthy on the view (asked after every change). */
export function until(session, predicate, what = "the view to change") {
  return new Promise((resolve, reject) => {
    let stop = () => {};
    const timer = setTimeout(() => {
      stop();
      const view = session.getSnapshot();
      reject(new Error("waited " + PATIENCE + " ms for " + what + "; the view: status " + view.status
        + (view.error ? " (" + view.error.code + ")" : "") + ", lastIndex " + view.lastIndex + ", "
        + view.events.length + " events, presence " + JSON.stringify(view.presence)));
    }, PATIENCE);
    const check = () => {
      let value;
      try {
        value = predicate(session.getSnapshot());
      } catch (e) {
        clearTimeout(timer);
        stop();
        reject(e);
        return;
      }
      if (value) {
        clearTimeout(timer);
        stop();
        resolve(value);
      }
    };
    stop = session.subscribe(check);
    check();
  });
}

/** Resolves once `check()` is truthy, asking every 20 ms (for what has no change to wait on). */
export async function eventually(check, what) {
  const deadline = Date.now() + PATIENCE;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("waited " + PATIENCE + " ms for " + what);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Resolves with the handler's arguments the first time `type` fires and `accept` takes them. */
export function next(session, type, accept = () => true) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error("waited " + PATIENCE + " ms for '" + type + "'"));
    }, PATIENCE);
    const off = session.on(type, (...args) => {
      if (!accept(...args)) return;
      clearTimeout(timer);
      off();
      resolve(args);
    });
  });
}

/** The session's stored history, read straight from the server. */
export async function history(contract, id) {
  const response = await fetch(SERVER + "/a2/" + contract + "/sessions/" + encodeURIComponent(id) + "/events?limit=1000");
  if (!response.ok) throw new Error("history answered " + response.status);
  return (await response.json()).events;
}

/** The messages of the session's history (the sample's consumers add events of their own). */
export async function messages(contract, id) {
  return (await history(contract, id)).filter((e) => e.type === "message.sent");
}

/** The messages of a view. */
export function sent(view) {
  return view.events.filter((e) => e.type === "message.sent");
}

export function message(text, author = "tester") {
  return { type: "message.sent", payload: { text, author, thread: author } };
}

/** Asks the harness to stop the server and start it again; answers once it is up. */
export async function restartServer() {
  const response = await fetch(RESTART, { method: "POST" });
  if (!response.ok) throw new Error("the restart answered " + response.status);
}

/**
 * A TCP proxy to the server. `cutAnswerOf(pattern)` arms it: the next request whose first bytes
 * match is passed on, and when the server's answer begins, both sides are cut without a byte of it
 * reaching the client: the server has stored the push, the client never learns. `hold(pattern)`
 * keeps matching requests from the server until `release()`.
 */
export async function proxy(t) {
  const target = new URL(SERVER);
  let armed = null;
  let holding = null;
  let down = false;
  const held = [];
  const cut = [];
  const sockets = new Set();
  const server = net.createServer((client) => {
    if (down) {
      client.destroy();   // as a server that is down: the connection ends before a byte is answered
      return;
    }
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    let cutting = false;
    let waiting = null;
    client.on("data", (chunk) => {
      if (armed && armed.test(chunk.toString("latin1"))) {
        armed = null;
        cutting = true;
      }
      if (!waiting && holding && holding.test(chunk.toString("latin1"))) {
        waiting = [];
        held.push(() => {
          const chunks = waiting;
          waiting = null;
          chunks.forEach((c) => upstream.write(c));
        });
      }
      if (waiting) waiting.push(chunk);
      else upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (cutting) {
        cut.push(chunk.toString("latin1").split("\r\n")[0]);
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    sockets.forEach((s) => s.destroy());
    server.close();
  });
  return {
    url: "http://127.0.0.1:" + server.address().port,
    cutAnswerOf(pattern = /[\s\S]/) {
      armed = pattern;
    },
    /** The status lines of the answers that were cut. */
    cut,
    /** Holds back every request whose first bytes match, from now until `release()`: they reach the server then. */
    hold(pattern) {
      holding = pattern;
    },
    /** Lets what `hold` kept back go on to the server, and holds nothing more. */
    release() {
      holding = null;
      held.splice(0).forEach((send) => send());
    },
    /** Cuts every open connection (a network failure). */
    dropAll() {
      sockets.forEach((s) => s.destroy());
    },
    /** The server goes down: every open connection is cut and every new one too, until `up()`. */
    down() {
      down = true;
      sockets.forEach((s) => s.destroy());
    },
    /** The server is back: connections reach it again. */
    up() {
      down = false;
    },
  };
}
