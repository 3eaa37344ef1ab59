// A2's client for browsers and Node: live session views over SSE or one WebSocket per contract,
// pushes through an outbox that retries a batch whole with the same ids until it is answered, and
// presence kept alive. Plain ES module, no dependencies; docs/PROTOCOL.md is what it speaks.

/** A failure the page can act on: `code` is A2's error code (§11), `status` the HTTP status (0 for none). */
export class A2Error extends Error {
  constructor(code, message, { status = 0, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "A2Error";
    this.code = code;
    this.status = status;
  }

  /** Whether sending the same request again may succeed (the network, a 5xx, 408, 429). */
  get retryable() {
    return this.code === "NETWORK" || this.status >= 500 || this.status === 408 || this.status === 429;
  }
}

/** An answer that is not A2's (a login page a redirect led to, a proxy's page); its body is let go. */
function unexpected(response, what, expected, advice) {
  const type = response.headers.get("content-type");
  response.body?.cancel().catch(() => {});
  return new A2Error("UNEXPECTED_RESPONSE", what + " answered " + response.status + " with " + (type || "no Content-Type")
    + ", not " + expected + (response.redirected ? ", after a redirect to " + response.url : "")
    + " (a login page? a proxy's?): " + advice, { status: response.status });
}

const CODES_BY_STATUS = { 400: "INVALID_PAYLOAD", 401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED", 409: "CONFLICT", 413: "PAYLOAD_TOO_LARGE", 503: "STORE_UNAVAILABLE" };

/** Errors whose answer was A2's own refusal (its JSON error body), not a security filter's or a proxy's. */
const refusedByA2 = new WeakSet();

/**
 * The error of a failed answer to `request` ("GET http://…/a2/chat/sessions/s/stream"). A2's answers carry
 * `{"error":{"code","message"}}`; another's (a proxy's page, Spring Boot's `{"error":"Not Found",…}`) does not,
 * and only its status is taken.
 */
async function errorOf(response, request, baseUrl) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    // not A2's JSON (a proxy's page, a login redirect): the status says enough
  }
  const error = (body && body.error && typeof body.error === "object" && typeof body.error.code === "string") ? body.error : null;
  const code = (error && error.code) || CODES_BY_STATUS[response.status] || (response.status >= 500 ? "INTERNAL" : "HTTP_" + response.status);
  // a security filter's refusal has no body of A2's; a bearer token's tells why in its challenge ("Jwt expired at …")
  const why = /error_description="([^"]*)"/.exec(response.headers.get("www-authenticate") || "");
  let message = (error && error.message) || ("HTTP " + response.status + " " + (response.statusText || "")
    + (why ? ": " + why[1] : ""));
  if (!error && response.status === 404 && request) {
    // A2 answers every path under its base path itself: a 404 of another's means the request missed A2 altogether
    message = request + " answered 404 " + (response.statusText || "Not Found") + ", and not from A2 (no A2 error in the "
      + "answer): the URL is not A2's. Check baseUrl (" + JSON.stringify(baseUrl) + "): it must be where A2's routes are, "
      + "a2.web.base-path (/a2 by default) under the application's context path, behind any proxy's prefix";
  }
  const refusal = new A2Error(code, message, { status: response.status });
  if (error) refusedByA2.add(refusal);
  return refusal;
}

function networkError(cause) {
  return new A2Error("NETWORK", "the server could not be reached: " + ((cause && cause.message) || cause), { cause });
}

function abortError(signal) {
  return (signal && signal.reason instanceof Error) ? signal.reason : new A2Error("ABORTED", "aborted");
}

/** A random UUID (v4) even where `crypto.randomUUID` is missing (pages served over plain http). */
export function newId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return c.randomUUID();
  const bytes = new Uint8Array(16);
  if (c && c.getRandomValues) c.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return hex.slice(0, 8) + "-" + hex.slice(8, 12) + "-" + hex.slice(12, 16) + "-" + hex.slice(16, 20) + "-" + hex.slice(20);
}

/** Spring Security's CSRF token, from its `XSRF-TOKEN` cookie, when the page has one. */
function csrfFromCookie() {
  const cookie = globalThis.document && globalThis.document.cookie;
  if (!cookie) return null;
  const found = cookie.split(/;\s*/).find((part) => part.startsWith("XSRF-TOKEN="));
  return found ? decodeURIComponent(found.slice("XSRF-TOKEN=".length)) : null;
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal && signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      if (signal) signal.removeEventListener("abort", done);
      resolve();
    }
    if (signal) signal.addEventListener("abort", done, { once: true });
  });
}

/** Exponential back-off with jitter, from `initial` ms to `max` ms. */
function backoff(attempt, { initial, max }) {
  const ceiling = Math.min(max, initial * 2 ** Math.min(attempt, 20));
  return ceiling / 2 + Math.random() * ceiling / 2;
}

/** Links an AbortSignal to a child controller; answers a function that unlinks it. */
function link(signal, controller) {
  if (!signal) return () => {};
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => {};
  }
  const abort = () => controller.abort(signal.reason);
  signal.addEventListener("abort", abort, { once: true });
  return () => signal.removeEventListener("abort", abort);
}

// ---------------------------------------------------------------------------------------------
// Outbox storage: where pushes wait until answered. Memory by default in Node, IndexedDB in browsers,
// so a push not yet answered when the page is reloaded is sent again (with the same ids) by the next page.

/** Keeps pending pushes in memory; pass one instance to two clients to have the second resume the first's. */
/*
 * A frame at least this large that a socket closed after with a protocol error (1002) is taken for one too
 * large: none smaller is, as a2.web.max-push-bytes is 256 KiB unless set lower, and the socket closes
 * above twice that.
 */
const LARGE_FRAME = 64 * 1024;

export class MemoryOutbox {
  constructor() {
    this.entries = new Map();
  }
  async load() {
    return [...this.entries.values()].sort((a, b) => a.seq - b.seq);
  }
  async put(entry) {
    this.entries.set(entry.key, entry);
  }
  async delete(key) {
    this.entries.delete(key);
  }
}

/** Keeps pending pushes in the browser's IndexedDB (database `name`, store `outbox`). */
export class IndexedDbOutbox {
  constructor(name = "a2-outbox") {
    this.name = name;
    this.db = null;
  }
  open() {
    if (!this.db) {
      this.db = new Promise((resolve, reject) => {
        const request = globalThis.indexedDB.open(this.name, 1);
        request.onupgradeneeded = () => request.result.createObjectStore("outbox", { keyPath: "key" });
        request.onsuccess = () => resolve(request.result);
        request.onerror = () => reject(request.error);
      });
    }
    return this.db;
  }
  async run(mode, work) {
    const db = await this.open();
    return new Promise((resolve, reject) => {
      const tx = db.transaction("outbox", mode);
      const request = work(tx.objectStore("outbox"));
      tx.oncomplete = () => resolve(request && request.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  }
  async load() {
    const entries = await this.run("readonly", (store) => store.getAll());
    return (entries || []).sort((a, b) => a.seq - b.seq);
  }
  put(entry) {
    return this.run("readwrite", (store) => store.put(entry));
  }
  delete(key) {
    return this.run("readwrite", (store) => store.delete(key));
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * A client of one A2 server. Options: `baseUrl` (default "/a2"; absolute in Node), `transport`
 * ("sse" or "socket"), `participant` (who presence writes are for; the server's caller name when
 * absent), `headers` (an object or a function answering one, e.g. a bearer token), `credentials`,
 * `fetch`, `WebSocket`, `outbox` (a storage; IndexedDB in browsers, memory elsewhere),
 * `presenceTtl` (the server's a2.presence.ttl in ms, default 60000), `backoff` ({initial, max} ms),
 * `idleTimeout` (ms without a byte or ping before a stream is taken for dead, default 45000),
 * `now` (the page's clock, `Date.now` by default), `signal` (aborting it closes the client).
 */
export function createClient(options = {}) {
  return new A2Client(options);
}

class A2Client {
  constructor(options) {
    const base = options.baseUrl ?? "/a2";
    this.baseUrl = base.endsWith("/") ? base.slice(0, -1) : base;
    this.transport = options.transport ?? "sse";
    if (this.transport !== "sse" && this.transport !== "socket") {
      throw new TypeError("transport must be 'sse' or 'socket', was " + this.transport);
    }
    this.participant = options.participant ?? null;
    this.lastPresenceAt = 0;
    this.now = options.now ?? Date.now;
    this.clockOffset = 0;   // the server's clock minus the page's, as the server last told it (0 until it does)
    this.headers = options.headers ?? {};
    this.credentials = options.credentials ?? "same-origin";
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.WebSocketImpl = options.WebSocket ?? globalThis.WebSocket;
    // a WebSocket the page gave may send the headers its own way; the standard one sends none on its handshake
    this.socketSendsHeaders = options.WebSocket !== undefined;
    this.csrf = options.csrf ?? csrfFromCookie;
    this.presenceTtl = options.presenceTtl ?? 60000;
    this.backoff = Object.assign({ initial: 250, max: 10000 }, options.backoff);
    this.idleTimeout = options.idleTimeout ?? 45000;
    this.controller = new AbortController();
    this.unlink = link(options.signal, this.controller);
    this.controller.signal.addEventListener("abort", () => this.close(), { once: true });
    this.sessions = new Set();
    this.sockets = new Map();   // contract -> SocketLine
    this.socketFrameLimit = Infinity;   // bytes of a frame the server closed a socket for (1009)
    const storage = options.outbox ?? (globalThis.indexedDB ? new IndexedDbOutbox() : new MemoryOutbox());
    this.outbox = new Outbox(this, storage);
    this.siblings = new PresenceSiblings(this);
    if (globalThis.addEventListener && globalThis.document) {
      // the page goes: say goodbye to presence while the browser still sends (keepalive), and write none
      // until it is shown again: a timer of the page may still fire, and its write would bring it back
      this.onPageHide = () => {
        this.hidden = true;
        this.sessions.forEach((s) => s.presenceGoodbye({ hiding: true }));
      };
      // back from the back/forward cache: what the views kept is written again
      this.onPageShow = () => {
        if (!this.hidden) return;
        this.hidden = false;
        this.sessions.forEach((s) => s.presenceBack());
      };
      globalThis.addEventListener("pagehide", this.onPageHide);
      globalThis.addEventListener("pageshow", this.onPageShow);
    }
  }

  get closed() {
    return this.controller.signal.aborted;
  }

  /** A live view of a session: history then live, resumed across reconnects; closed at once if the client is. */
  session(contract, id, options = {}) {
    const session = new Session(this, contract, id, options);
    if (this.closed) {
      session.close();   // a closed client opens nothing: the view is closed from the start
      return session;
    }
    this.sessions.add(session);
    session.start();
    return session;
  }

  /** Pushes without a view; see Session#push. */
  push(contract, id, events, options = {}) {
    return this.outbox.push(contract, id, events, options);
  }

  /** Ends every view and socket; pending pushes stay in the outbox for the next client; a later push rejects (CLOSED). */
  close() {
    if (this.ending) return;
    this.ending = true;
    if (!this.controller.signal.aborted) this.controller.abort(new A2Error("CLOSED", "the client was closed"));
    this.unlink();
    for (const session of [...this.sessions]) session.close();
    for (const line of [...this.sockets.values()]) line.close();
    this.outbox.close();
    this.siblings.close();
    this.sockets.clear();
    if (this.onPageHide) globalThis.removeEventListener("pagehide", this.onPageHide);
    if (this.onPageShow) globalThis.removeEventListener("pageshow", this.onPageShow);
  }

  url(contract, session, rest = "") {
    return this.baseUrl + "/" + encodeURIComponent(contract) + (session === undefined ? "" : "/sessions/" + encodeURIComponent(session)) + rest;
  }

  /** Whether the page gave `headers` (a bearer token, say), which a browser's WebSocket handshake cannot carry. */
  get hasHeaders() {
    return typeof this.headers === "function" || Object.keys(this.headers).length > 0;
  }

  async requestHeaders(extra, { bare } = {}) {
    const given = bare ? {} : typeof this.headers === "function" ? await this.headers() : this.headers;
    const headers = Object.assign({ Accept: "application/json" }, given, extra);
    const token = this.csrf && this.csrf();
    if (token && !headers["X-XSRF-TOKEN"]) headers["X-XSRF-TOKEN"] = token;
    return headers;
  }

  /** One JSON call; A2Error on a failure, with code NETWORK when no answer came. */
  async call(method, url, body, { signal, keepalive, bare } = {}) {
    const headers = await this.requestHeaders(body === undefined ? {} : { "Content-Type": "application/json" }, { bare });
    let response;
    try {
      response = await this.fetchImpl(url, { method, headers, credentials: this.credentials, signal, keepalive,
        body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (e) {
      if (signal && signal.aborted) throw abortError(signal);
      throw networkError(e);
    }
    if (!response.ok) throw await errorOf(response, method + " " + url, this.baseUrl);
    if (!/^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(response.headers.get("content-type") || "")) {
      // a login page a redirect led to, a proxy's page: nothing was stored, and asking again answers the same
      throw unexpected(response, method + " " + url, "JSON", "log in or check baseUrl");
    }
    try {
      return await response.json();
    } catch (e) {
      if (signal && signal.aborted) throw abortError(signal);
      throw networkError(e);  // the answer was cut: the request may have been applied
    }
  }

  /**
   * The `at` of a presence write, taken when the page makes it rather than when the server gets it:
   * the server keeps each field's latest `at`, so a write still on its way (a PUT on another
   * connection, a socket frame behind an HTTP goodbye) no longer undoes a later one that arrived
   * first (`typing: false` with a push, the removal as the page goes). On the server's clock as far
   * as the page knows it (`serverTime`), so the writes of a device whose clock is behind do not lose
   * to another device's; never twice the same, and never back, even when that estimate goes back.
   */
  presenceAt() {
    this.lastPresenceAt = Math.max(Math.round(this.now() + this.clockOffset), this.lastPresenceAt + 1);
    return this.lastPresenceAt;
  }

  /**
   * The server's clock (`now`, epoch ms) as a presence frame or a presence write's answer tells it:
   * the page's clock is taken to be as far from it as it is now. The latest sample wins (a clock set
   * since is followed); each is late by the time the frame took, a few ms. A server that sends none
   * leaves the page's own clock.
   */
  serverTime(now) {
    if (typeof now === "number" && Number.isFinite(now)) this.clockOffset = now - this.now();
  }

  socket(contract) {
    let line = this.sockets.get(contract);
    if (!line) {
      if (!this.WebSocketImpl) throw new TypeError("no WebSocket here: pass one as the WebSocket option (in Node before 22, the 'ws' "
        + "package's, or run Node with --experimental-websocket), or use transport 'sse'");
      line = new SocketLine(this, contract);
      this.sockets.set(contract, line);
    }
    return line;
  }

  forget(session) {
    this.sessions.delete(session);
    const line = this.sockets.get(session.contract);
    if (line) line.unsubscribe(session);
  }
}

// ---------------------------------------------------------------------------------------------

/** Pending pushes, sent in order per session, each retried whole with the same ids until answered. */
class Outbox {
  constructor(client, storage) {
    this.client = client;
    this.storage = storage;
    this.queues = new Map();    // "contract\u0000session" -> entries
    this.waiters = new Map();   // entry key -> {resolve, reject}
    this.seq = Date.now() * 1000;
    this.ready = storage.load().then((entries) => {
      for (const entry of entries) this.queue(entry);
    }, () => {}).then(() => this.pumpAll());
  }

  queue(entry) {
    const name = entry.contract + "\u0000" + entry.session;
    let queue = this.queues.get(name);
    if (!queue) this.queues.set(name, queue = { entries: [], running: false });
    if (queue.entries.some((e) => e.key === entry.key)) return queue;
    // in the order they were pushed, also when the stored ones of an earlier page load after a new push
    let at = queue.entries.length;
    while (at > (queue.running ? 1 : 0) && queue.entries[at - 1].seq > entry.seq) at--;
    queue.entries.splice(at, 0, entry);
    for (const session of this.client.sessions) {
      if (session.contract === entry.contract && session.id === entry.session) session.addPending(entry);
    }
    return queue;
  }

  /** The entries still waiting for a session (to show them optimistically in a new view). */
  pendingOf(contract, session) {
    const queue = this.queues.get(contract + "\u0000" + session);
    return queue ? queue.entries : [];
  }

  async push(contract, session, events, { presence, signal } = {}) {
    if (!Array.isArray(events) || events.length === 0) {
      throw new A2Error("INVALID_PAYLOAD", "events must be a non-empty array of {type, payload, id?}", { status: 0 });
    }
    if (signal && signal.aborted) throw abortError(signal);
    if (this.client.closed) throw new A2Error("CLOSED", "the client was closed: push with a new one");
    const entry = {
      key: newId(),
      seq: this.seq++,
      contract,
      session,
      events: events.map((e) => ({ id: e.id ?? newId(), type: e.type, payload: e.payload ?? null })),
      presence: presence ? this.presenceWrite(presence) : undefined,
    };
    const answered = new Promise((resolve, reject) => this.waiters.set(entry.key, { resolve, reject }));
    if (signal) {
      signal.addEventListener("abort", () => this.settle(entry, null, abortError(signal)), { once: true });
    }
    // stored before it is first sent, so a reload finds it; no storage (private mode): memory still retries
    const { key, seq, contract: c, session: s, events: e, presence: p } = entry;
    entry.saved = this.storage.put({ key, seq, contract: c, session: s, events: e, presence: p }).catch(() => {});
    this.pump(this.queue(entry));   // shows it as pending at once
    return answered;
  }

  presenceWrite(presence) {
    if (presence.values) return Object.assign({ participant: this.client.participant ?? undefined, at: this.client.presenceAt() }, presence);
    return { participant: this.client.participant ?? undefined, values: presence, at: this.client.presenceAt() };
  }

  pumpAll() {
    for (const queue of this.queues.values()) this.pump(queue);
  }

  async pump(queue) {
    if (queue.running) return;
    queue.running = true;
    try {
      await this.ready;
      while (queue.entries.length > 0 && !this.client.closed) {
        const entry = queue.entries[0];
        let attempt = 0;
        while (!entry.done && !this.client.closed) {
          try {
            const stored = await this.send(entry);
            this.settle(entry, stored, null);
          } catch (error) {
            if (entry.done || this.client.closed) break;   // closed: it stays stored for the next client
            if (!(error instanceof A2Error) || !error.retryable) {
              this.settle(entry, null, error);
              break;
            }
            // not answered: the same batch again, the same ids, so it is stored once
            await sleep(backoff(attempt++, this.client.backoff), this.client.controller.signal);
          }
        }
        if (this.client.closed && !entry.done) break;
        queue.entries.shift();
      }
    } finally {
      queue.running = false;
    }
  }

  async send(entry) {
    await entry.saved;
    const body = { events: entry.events };
    if (entry.presence) body.presence = entry.presence;
    entry.controller = new AbortController();
    const unlink = link(this.client.controller.signal, entry.controller);
    try {
      if (this.client.transport === "socket") {
        const stored = await this.client.socket(entry.contract).push(entry, body, entry.controller.signal);
        if (stored) return stored;
        // the socket could not carry it (it does not open, or the frame is too large for it): over HTTP,
        // the same batch with the same ids, so it is stored once and a refusal (401, 413…) is told
      }
      const answer = await this.client.call("POST", this.client.url(entry.contract, entry.session, "/events"), body,
        { signal: entry.controller.signal });
      return answer.events;
    } finally {
      unlink();
    }
  }

  /** The client closed: who waits is told; what is not answered stays in storage for the next client. */
  close() {
    const closed = new A2Error("CLOSED", "the client was closed before the push was answered; it stays in the outbox");
    for (const waiter of this.waiters.values()) waiter.reject(closed);
    this.waiters.clear();
  }

  settle(entry, stored, error) {
    if (entry.done) return;
    entry.done = true;
    if (entry.controller) entry.controller.abort(error || undefined);
    this.storage.delete(entry.key).catch(() => {});
    const queue = this.queues.get(entry.contract + "\u0000" + entry.session);
    if (queue && queue.entries[0] !== entry) queue.entries.splice(queue.entries.indexOf(entry), 1);
    for (const session of this.client.sessions) {
      if (session.contract === entry.contract && session.id === entry.session) session.settlePending(entry, error, stored);
    }
    const waiter = this.waiters.get(entry.key);
    this.waiters.delete(entry.key);
    if (waiter) error ? waiter.reject(error) : waiter.resolve(stored);
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * A live view of one session. Read `view` (or `getSnapshot()`), `subscribe(listener)` to changes, or
 * `on(type, handler)` for "event", "pending", "failed", "presence", "state", "cleared", "status", "error".
 */
class Session {
  constructor(client, contract, id, options) {
    this.client = client;
    this.contract = contract;
    this.id = id;
    this.reducer = options.state ?? null;
    this.optimistic = options.optimistic ?? true;
    this.lastIndex = options.after ?? 0;
    this.confirmed = [];
    this.pending = [];
    this.byId = new Map();
    this.presence = {};
    this.state = null;
    this.status = "connecting";
    this.error = null;
    this.handlers = new Map();
    this.listeners = new Set();
    this.controller = new AbortController();
    this.unlink = link(options.signal, this.controller);
    this.controller.signal.addEventListener("abort", () => this.close(), { once: true });
    this.kept = {};             // presence fields kept alive
    this.written = new Set();   // presence fields written and not removed, kept alive or not: the goodbye removes them
    this.keepTimer = null;
    this.presenceDown = false;  // a keep-alive failed for want of the network: told once, until a write gets through
    this.keepHeld = false;      // the view failed: its kept fields wait, unwritten, for it to be live again
    this.stateReads = null;
    this.snapshot = null;
    this.subscribe = this.subscribe.bind(this);
    this.getSnapshot = this.getSnapshot.bind(this);
  }

  start() {
    if (this.optimistic) for (const entry of this.client.outbox.pendingOf(this.contract, this.id)) this.addPending(entry, true);
    if (this.client.transport === "socket") this.client.socket(this.contract).subscribe(this);
    else this.runStream();
    this.changed();
  }

  get closed() {
    return this.controller.signal.aborted;
  }

  // --- reading

  /** Confirmed events (after the latest clear) in index order, then optimistic ones not yet stored. */
  get events() {
    return this.getSnapshot().events;
  }

  /** An immutable view, the same object until something changes (for useSyncExternalStore). */
  getSnapshot() {
    if (!this.snapshot) {
      this.snapshot = Object.freeze({
        events: this.pending.length ? this.confirmed.concat(this.pending.map((p) => p.event)) : this.confirmed,
        pending: this.pending.map((p) => p.event),
        presence: this.presence,
        state: this.state,
        status: this.status,
        error: this.error,
        lastIndex: this.lastIndex,
      });
    }
    return this.snapshot;
  }

  get view() {
    return this.getSnapshot();
  }

  /** The event that caused `event` (its consumer's trigger), when it is in the view. */
  causeOf(event) {
    if (!event || !event.cause) return null;
    const index = event.cause.index;
    return this.confirmed.find((e) => e.index === index) ?? null;
  }

  /** Calls `listener()` after every change; answers the function that stops it. */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  on(type, handler) {
    let set = this.handlers.get(type);
    if (!set) this.handlers.set(type, set = new Set());
    set.add(handler);
    return () => set.delete(handler);
  }

  emit(type, ...args) {
    const set = this.handlers.get(type);
    if (set) for (const handler of [...set]) {
      try {
        handler(...args);
      } catch (e) {
        setTimeout(() => { throw e; });
      }
    }
  }

  changed() {
    this.snapshot = null;
    for (const listener of [...this.listeners]) listener();
  }

  setStatus(status, error = null) {
    if (this.status === status && (this.error === error || status === "reconnecting")) return;
    // back after an outage, which may have outlasted the server's TTL, or after an error the page reconnected from:
    // the kept fields at once, not at the next keep-alive
    const back = status === "live" && (this.status === "reconnecting" || this.keepHeld);
    if (status === "live" || status === "closed") this.keepHeld = false;
    if (status === "error") {
      // the view stopped (its stream or subscription refused: the caller may no longer read the session, say): its
      // presence is not kept alive meanwhile, where each write would be refused again and told again; the kept fields
      // are written again if the page reconnects it
      clearInterval(this.keepTimer);
      this.keepTimer = null;
      this.keepHeld = true;
    }
    this.status = status;
    this.error = error;
    this.emit("status", status, error);
    if (error) this.emit("error", error);
    this.changed();
    if (back) this.presenceBack();
  }

  // --- what the stream delivers

  receiveEvents(events) {
    const fresh = [];
    for (const event of events) {
      if (event.index <= this.lastIndex) continue;   // a repeat never shows twice
      this.lastIndex = event.index;
      fresh.push(event);
    }
    if (fresh.length === 0) return;
    const reconciled = new Set();
    for (const event of fresh) {
      const index = this.pending.findIndex((p) => p.event.id === event.id);
      if (index >= 0) {
        reconciled.add(event.id);
        this.pending.splice(index, 1);
      }
    }
    this.confirmed = this.confirmed.concat(fresh);
    for (const event of fresh) this.emit("event", event, { wasPending: reconciled.has(event.id) });
    this.emit("events", fresh);
    if (this.reducer && this.client.transport === "socket") this.readState();
    this.changed();
  }

  receiveCleared(index) {
    if (index <= this.lastIndex) return;   // a marker already seen
    this.lastIndex = index;
    this.confirmed = [];
    this.dropPassed();
    this.emit("cleared", index);
    if (this.reducer && this.client.transport === "socket") this.readState();
    this.changed();
  }

  receivePresence(data) {
    this.client.serverTime(data.now);
    if (data.snapshot) {
      this.presence = {};
      for (const [participant, fields] of Object.entries(data.snapshot.participants || {})) {
        this.presence[participant] = Object.assign({}, fields);
      }
    }
    if (data.patches && data.patches.length) {
      const next = Object.assign({}, this.presence);
      for (const patch of data.patches) {
        const fields = Object.assign({}, next[patch.participant]);
        if (patch.value === null || patch.value === undefined) delete fields[patch.field];
        else fields[patch.field] = { value: patch.value, at: patch.at };
        if (Object.keys(fields).length === 0) delete next[patch.participant];
        else next[patch.participant] = fields;
      }
      this.presence = next;
    }
    this.emit("presence", this.presence, data);
    this.changed();
  }

  receiveState(data) {
    this.state = data;
    this.emit("state", data);
    this.changed();
  }

  /** Over the socket there are no state frames: the state is read after each batch, one read at a time. */
  readState() {
    if (this.stateReads) {
      this.stateReads.again = true;
      return;
    }
    this.stateReads = { again: false };
    this.readStates().finally(() => { this.stateReads = null; });
  }

  async readStates() {
    const url = this.client.url(this.contract, this.id, "/state/" + encodeURIComponent(this.reducer));
    let attempt = 0;
    while (!this.closed) {
      this.stateReads.again = false;
      try {
        const state = await this.client.call("GET", url, undefined, { signal: this.controller.signal });
        if (this.closed) return;
        this.receiveState(state);
        attempt = 0;
        if (!this.stateReads.again) return;
      } catch (e) {
        if (this.closed) return;
        if (e instanceof A2Error && !e.retryable) {
          // a reducer the contract does not have (404), a refusal: as over SSE, the view fails with the code and
          // leaves the socket, until the page calls reconnect(); the session's other views go on
          const line = this.client.sockets.get(this.contract);
          if (line) line.unsubscribe(this);
          this.setStatus("error", e);
          return;
        }
        // cut by the network, a 5xx: no batch may come to ask again, so the view asks again itself
        await sleep(backoff(attempt++, this.client.backoff), this.controller.signal);
      }
    }
  }

  // --- the SSE stream: fetch, so a 401 or 403 is seen (EventSource hides the status)

  async runStream() {
    let attempt = 0;
    while (!this.closed) {
      const controller = new AbortController();
      const unlink = link(this.controller.signal, controller);
      let error = null;
      try {
        let query = "?after=" + this.lastIndex;
        if (this.reducer) query += "&state=" + encodeURIComponent(this.reducer);
        const url = this.client.url(this.contract, this.id, "/stream" + query);
        const response = await this.client.fetchImpl(url, {
          headers: await this.client.requestHeaders({ Accept: "text/event-stream" }),
          credentials: this.client.credentials,
          cache: "no-store",
          signal: controller.signal,
        });
        const type = response.headers.get("Content-Type") || "";
        if (!response.ok) {
          error = await errorOf(response, "GET " + url, this.client.baseUrl);
        } else if (!/^text\/event-stream\s*(;|$)/i.test(type)) {
          // a login page a redirect led to, a proxy's page: asking again would answer the same
          error = unexpected(response, "the stream", "text/event-stream", "log in or check baseUrl, then call reconnect()");
        } else {
          this.setStatus("live");
          // the back-off starts again once the stream delivered something, not when it merely answered
          await this.readSse(response.body, controller, () => { attempt = 0; });
          error = networkError(new Error("the stream ended"));
        }
      } catch (e) {
        error = (e instanceof A2Error) ? e : networkError(e);
      } finally {
        unlink();
        controller.abort();
      }
      if (this.closed) break;
      if (!error.retryable) {
        // 401, 403, 404, 400: reconnecting would not help; the page decides (log in, then reconnect())
        this.setStatus("error", error);
        return;
      }
      this.setStatus("reconnecting", error);
      await sleep(backoff(attempt++, this.client.backoff), this.controller.signal);
    }
  }

  async readSse(body, controller, delivered) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let event = "message";
    let data = [];
    let idle = null;
    const watch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => controller.abort(new Error("no ping within " + this.client.idleTimeout + " ms")), this.client.idleTimeout);
    };
    watch();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        watch();
        buffer += decoder.decode(value, { stream: true });
        let newline;
        while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
          if (buffer[newline] === "\r" && newline === buffer.length - 1) break;   // maybe half of \r\n
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
          if (line === "") {
            if (data.length) {
              delivered();
              this.dispatchSse(event, data.join("\n"));
            }
            event = "message";
            data = [];
          } else if (!line.startsWith(":")) {
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            let text = colon < 0 ? "" : line.slice(colon + 1);
            if (text.startsWith(" ")) text = text.slice(1);
            if (field === "event") event = text;
            else if (field === "data") data.push(text);
          }
        }
      }
    } finally {
      clearTimeout(idle);
      reader.cancel().catch(() => {});
    }
  }

  dispatchSse(type, text) {
    const data = JSON.parse(text);
    if (type === "events") this.receiveEvents(data.events);
    else if (type === "presence") this.receivePresence(data);
    else if (type === "state") this.receiveState(data);
    else if (type === "cleared") this.receiveCleared(data.index);
  }

  /** After an error status (a new login, say): connect again. */
  reconnect() {
    if (this.closed || this.status !== "error") return;
    this.setStatus("connecting");
    if (this.client.transport === "socket") this.client.socket(this.contract).subscribe(this);
    else this.runStream();
  }

  // --- pushing

  /**
   * Pushes a batch: ids are generated where absent; the batch is shown at once as pending (optimistic),
   * kept in the outbox and sent again whole with the same ids until the server answers, so it is stored
   * once. Answers the stored events ({index, id} at least); rejects with an A2Error the server gave.
   */
  push(events, options = {}) {
    const values = options.presence && (options.presence.values ?? options.presence);
    // a field the push writes (typing: false as the message goes) is no longer kept alive at its old value
    if (values && !options.presence.participant) {
      this.takeOver(Object.keys(values));
      for (const [field, value] of Object.entries(values)) {
        if (value === null) this.written.delete(field);
        else this.written.add(field);
        if (!(field in this.kept)) continue;
        if (value === null || value === false) delete this.kept[field];
        else this.kept[field] = value;
      }
      this.keepAlive();
    }
    return this.client.outbox.push(this.contract, this.id, events, options);
  }

  /**
   * Drops the pending events stored at an index the view has gone past without them: a clear took them
   * before the stream could show them. Answers whether it dropped any.
   */
  dropPassed() {
    const kept = this.pending.filter((p) => p.index == null || p.index > this.lastIndex);
    const dropped = kept.length !== this.pending.length;
    this.pending = kept;
    return dropped;
  }

  addPending(entry, quiet = false) {
    if (!this.optimistic || this.pending.some((p) => p.entry === entry)) return;
    const added = [];
    for (const e of entry.events) {
      if (this.confirmed.some((c) => c.id === e.id)) continue;
      const event = Object.freeze({ index: null, id: e.id, type: e.type, payload: e.payload, createdAt: null, cause: null, pending: true });
      this.pending.push({ entry, event });
      added.push(event);
    }
    if (added.length) {
      this.emit("pending", added);
      if (!quiet) this.changed();
    }
  }

  settlePending(entry, error, stored) {
    if (!error) {
      // stored: the stream brings the events, which replace the pending ones, unless the view is already
      // past them (a clear the stream showed first): those the stream will never bring
      for (const p of this.pending) {
        if (p.entry !== entry) continue;
        const found = (stored || []).find((e) => e.id === p.event.id);
        if (found) p.index = found.index;
      }
      if (this.dropPassed()) this.changed();
      return;
    }
    const withdrawn = this.pending.filter((p) => p.entry === entry).map((p) => p.event);
    this.pending = this.pending.filter((p) => p.entry !== entry);
    this.emit("failed", { events: withdrawn, error });
    this.changed();
  }

  // --- presence

  /**
   * Writes presence fields for the client's participant. Fields with a value are written again
   * before the server's TTL runs out while the view is open; `null` removes a field.
   */
  async setPresence(values, { keepAlive = true, signal } = {}) {
    this.takeOver(Object.keys(values));
    for (const [field, value] of Object.entries(values)) {
      if (value === null || !keepAlive) delete this.kept[field];
      else this.kept[field] = value;
      if (value === null) this.written.delete(field);
      else this.written.add(field);
    }
    // the page is going (or in the back/forward cache): written when it is shown again, if ever
    if (this.client.hidden) return;
    this.keepAlive();
    return this.writePresence(values, signal, false, (e) => this.refused(values, e));
  }

  /**
   * A write the server refused for what it holds (a field the contract lacks, a value that does not bind, one
   * too large): the server takes a presence write whole or not at all, so its fields are no longer kept nor
   * removed on goodbye; kept, every keep-alive (and the goodbye) would carry them and be refused too, and the
   * view's other fields would expire while the page is open. A write that failed for want of the network is
   * kept, to be written again, and so is one refused to the caller.
   */
  refused(values, error) {
    // only what the write holds can be at fault: a refusal of the caller (403, 401) may be lifted by a login
    if (!(error instanceof A2Error) || (error.code !== "INVALID_PAYLOAD" && error.code !== "PAYLOAD_TOO_LARGE")) return;
    let changed = false;
    for (const [field, value] of Object.entries(values)) {
      if (value === null || this.kept[field] !== value) continue;   // written again since: not this write's
      delete this.kept[field];
      this.written.delete(field);
      changed = true;
    }
    if (changed) this.keepAlive();
  }

  /**
   * Writes presence; `onRefused` hears a refusal of the server's, which over the socket comes later as an error
   * frame (a presence frame has no answer of its own) and over HTTP rejects the promise too.
   */
  writePresence(values, signal, keepalive = false, onRefused = null) {
    const body = { values, at: this.client.presenceAt() };
    if (this.client.participant) body.participant = this.client.participant;
    if (this.client.transport === "socket" && !keepalive) {
      const line = this.client.socket(this.contract);
      const ref = onRefused ? line.presenceRef(onRefused) : undefined;
      if (line.send({ type: "presence", ...(ref ? { ref } : {}), session: this.id, ...body })) {
        this.presenceDown = false;
        return Promise.resolve();
      }
      if (ref) line.presenceRefused.delete(ref);
    }
    if (onRefused) {
      return this.writePresence(values, signal, keepalive).catch((e) => {
        // a refusal is the view's error event on either transport (over the socket it comes as one): a page, or
        // usePresence, that does not await the write still hears it
        if (e instanceof A2Error && !e.retryable) this.emit("error", e);
        onRefused(e);
        throw e;
      });
    }
    return this.client.call("PUT", this.client.url(this.contract, this.id, "/presence"), body,
      { signal: signal ?? this.controller.signal, keepalive }).then((answer) => {
      this.presenceDown = false;
      this.client.serverTime(answer && answer.now);
      return answer;
    });
  }

  /** Writes the kept fields again (a keep-alive, or the view back); a failure is the view's `error` event. */
  writeKept() {
    this.client.siblings.keeping(this, Object.keys(this.kept));
    this.writePresence(Object.assign({}, this.kept)).catch((e) => {
      // the server out of reach (or answering 5xx): said once, at the first failure, not at every keep-alive
      // while the outage lasts; a write that gets through again ends it. A refusal (403, INVALID_PAYLOAD)
      // is told every time.
      if (e instanceof A2Error && e.retryable) {
        if (this.presenceDown) return;
        this.presenceDown = true;
      }
      this.emit("error", e);
    });
  }

  /**
   * The fields this view writes are no longer the other views' of the same session (a list and a composer of
   * one room, say): the server holds one value per participant, so the latest write's view keeps it alive and
   * removes it. Two views keeping one field alive wrote their two values in turn for as long as both were open,
   * and a view closing removed what another still showed.
   */
  takeOver(fields) {
    for (const other of this.client.sessions) {
      if (other === this || other.contract !== this.contract || other.id !== this.id) continue;
      if (!fields.some((field) => field in other.kept || other.written.has(field))) continue;
      for (const field of fields) {
        delete other.kept[field];
        other.written.delete(field);
      }
      other.keepAlive();
    }
  }

  keepAlive() {
    clearInterval(this.keepTimer);
    this.keepTimer = null;
    if (Object.keys(this.kept).length === 0 || this.closed || this.client.hidden || this.status === "error") return;
    this.client.siblings.keeping(this, Object.keys(this.kept));
    this.keepTimer = setInterval(() => this.writeKept(), Math.max(250, this.client.presenceTtl / 3));
  }

  /**
   * Removes the fields this view wrote (when it closes, or the page goes): those it kept alive and
   * those it did not, such as the `typing: false` of a push, which any later write of the participant
   * would renew. A page that goes remembers the kept ones, to write them again should it be shown
   * again (`presenceBack`).
   */
  presenceGoodbye({ hiding = false } = {}) {
    // a field another tab of this browser keeps alive for the same participant stays: it still shows it
    const elsewhere = this.client.siblings.keptElsewhere(this);
    this.client.siblings.left(this);
    const fields = [...new Set([...Object.keys(this.kept), ...this.written])].filter((f) => !elsewhere.has(f));
    this.written = new Set();
    clearInterval(this.keepTimer);
    this.keepTimer = null;
    if (!hiding) this.kept = {};
    if (fields.length === 0) return;
    const values = Object.fromEntries(fields.map((f) => [f, null]));
    // keepalive: a browser still sends it while the page unloads
    this.writePresence(values, new AbortController().signal, true).catch(() => {});
  }

  /**
   * The view is back (live after reconnecting, or the page shown again from the back/forward cache):
   * the kept fields are written again, as they may have expired meanwhile, and kept alive.
   */
  presenceBack() {
    if (this.closed || this.client.hidden || Object.keys(this.kept).length === 0) return;
    for (const field of Object.keys(this.kept)) this.written.add(field);
    this.keepAlive();
    this.writeKept();
  }

  /** Stops the view: its stream or subscription ends, kept presence fields are removed. */
  close() {
    if (this.ending) return;
    this.ending = true;
    this.presenceGoodbye();
    if (!this.controller.signal.aborted) this.controller.abort(new A2Error("CLOSED", "the view was closed"));
    this.unlink();
    this.client.forget(this);
    this.setStatus("closed");
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * What the other tabs of this browser (or clients of this process) keep alive of the same participant's
 * presence in the same sessions, as they tell it on a BroadcastChannel where there is one. The server holds
 * one value per participant and field, so a tab that closed removed what another tab of the same person
 * still showed: "Here now" lost ann until her other tab's next keep-alive.
 */
class PresenceSiblings {
  constructor(client) {
    this.client = client;
    this.tab = newId();
    this.kept = new Map();   // session key -> Map(tab -> { fields, until })
    const Channel = globalThis.BroadcastChannel;
    this.channel = typeof Channel === "function" ? new Channel("a2-presence") : null;
    if (this.channel) {
      this.channel.onmessage = (message) => this.heard(message.data);
      if (typeof this.channel.unref === "function") this.channel.unref();   // Node: keeps no process alive
    }
  }

  key(session) {
    return JSON.stringify([this.client.baseUrl, session.contract, session.id, this.client.participant]);
  }

  /** Tells the other tabs which fields `session` keeps alive: they hold for a TTL unless told again. */
  keeping(session, fields) {
    this.post({ type: "keeping", key: this.key(session), tab: this.tab, fields, ttl: this.client.presenceTtl });
  }

  /** Tells them `session` keeps nothing any more (it closed, or the page went). */
  left(session) {
    this.post({ type: "left", key: this.key(session), tab: this.tab });
  }

  /** The fields another tab keeps alive now for this participant in `session`. */
  keptElsewhere(session) {
    const fields = new Set();
    const tabs = this.kept.get(this.key(session));
    if (!tabs) return fields;
    const now = Date.now();
    for (const [tab, kept] of tabs) {
      if (kept.until < now) tabs.delete(tab);
      else kept.fields.forEach((field) => fields.add(field));
    }
    return fields;
  }

  heard(message) {
    if (!message || message.tab === this.tab || typeof message.key !== "string" || typeof message.tab !== "string") return;
    let tabs = this.kept.get(message.key);
    if (message.type === "keeping" && Array.isArray(message.fields)) {
      if (!tabs) this.kept.set(message.key, tabs = new Map());
      tabs.set(message.tab, { fields: message.fields, until: Date.now() + (Number(message.ttl) || 0) });
    } else if (message.type === "left" && tabs) {
      tabs.delete(message.tab);
      // a tab that went before it heard of this one removed what this one keeps: written again at once
      for (const session of this.client.sessions) {
        if (this.key(session) === message.key && Object.keys(session.kept).length > 0 && session.keepTimer) session.writeKept();
      }
    }
  }

  post(message) {
    try {
      if (this.channel) this.channel.postMessage(message);
    } catch (e) {
      // a closed channel: nothing to tell
    }
  }

  close() {
    if (this.channel) this.channel.close();
    this.channel = null;
  }
}

/**
 * One WebSocket for every view of a contract: one subscription per session whatever the number of its views,
 * resubscribed after the lowest last index; pushes with refs, sent over HTTP where the socket cannot carry them.
 */
class SocketLine {
  constructor(client, contract) {
    this.client = client;
    this.contract = contract;
    // session id -> {views, pending: subscribe frames not yet answered, position: the index after which the
    // subscription brings every event (null: not subscribed on this socket)}
    this.sessions = new Map();
    this.acks = new Map();       // ref -> {resolve, reject}, in the order the pushes were sent
    // ref -> what hears the refusal of a presence frame: none answers a write that is stored, so only the
    // latest are kept (an error frame follows its frame within one round trip)
    this.presenceRefused = new Map();
    this.socket = null;
    this.open = false;
    this.attempt = 0;
    this.refs = 0;
    this.opened = null;
    this.largestSent = 0;        // bytes of the largest frame sent on this socket
    this.connect();
  }

  url() {
    const http = this.client.url(this.contract, undefined, "/socket");
    const absolute = new URL(http, globalThis.location ? globalThis.location.href : undefined);
    absolute.protocol = absolute.protocol === "https:" ? "wss:" : "ws:";
    return absolute.href;
  }

  connect() {
    if (this.client.closed) return;
    let resolveOpened;
    this.opened = new Promise((resolve) => { resolveOpened = resolve; });
    this.resolveOpened = resolveOpened;
    const socket = new this.client.WebSocketImpl(this.url());
    this.socket = socket;
    this.largestSent = 0;
    let wasOpen = false;
    const watch = () => {
      clearTimeout(this.idle);
      // the server pings an idle socket: silence this long means the connection is gone
      this.idle = setTimeout(() => lost(), this.client.idleTimeout);
    };
    const lost = (code) => {
      if (this.socket !== socket) return;
      clearTimeout(this.idle);
      this.socket = null;
      this.open = false;
      resolveOpened(false);
      this.opened = Promise.resolve(false);   // a push until the next socket opens goes over HTTP
      try {
        socket.close();
      } catch {
        // already closing
      }
      const error = networkError(new Error("the socket closed" + (code ? " (" + code + ")" : "")));
      // Chromium tells the close of a socket for a frame too large as a protocol error (1002), Node as 1009
      if (code === 1009 || (code === 1002 && this.largestSent >= LARGE_FRAME)) {
        // a frame over twice a2.web.max-push-bytes: none as large goes on a socket again, and the pushes not
        // answered go over HTTP (same ids), where the one too large is refused with PAYLOAD_TOO_LARGE
        this.client.socketFrameLimit = Math.min(this.client.socketFrameLimit, this.largestSent);
        for (const ack of this.acks.values()) ack.resolve(null);
      } else {
        for (const ack of this.acks.values()) ack.reject(error);   // not answered: the outbox sends again
      }
      this.acks.clear();
      if (this.client.closed) return;
      for (const group of this.sessions.values()) {
        group.pending = 0;
        group.position = null;
        for (const view of group.views) {
          view.subscribed = false;
          if (view.status !== "error") view.setStatus("reconnecting", error);
        }
      }
      this.reconnect(wasOpen);
    };
    socket.onopen = () => {
      if (this.socket !== socket) return;
      wasOpen = true;
      this.open = true;
      this.attempt = 0;
      watch();
      resolveOpened(true);
      for (const [id, group] of this.sessions) this.sendSubscribe(id, group);
    };
    socket.onmessage = (message) => {
      if (this.socket !== socket) return;
      watch();
      this.receive(JSON.parse(message.data));
    };
    socket.onclose = (event) => lost(event && event.code);
    // some implementations (Node 20's) report a refused connection with an error and no close; where a
    // close follows the error (browsers), it comes in the same task, with its code
    socket.onerror = () => setTimeout(() => lost(), 0);
  }

  async reconnect(wasOpen) {
    this.reconnecting = true;
    try {
      await this.retry(wasOpen);
    } finally {
      this.reconnecting = false;
    }
  }

  async retry(wasOpen) {
    if (!wasOpen) {
      // the handshake failed: a browser hides its status, so ask the socket's URL over HTTP, as the handshake
      // asked: with the page's cookies and origin, and without the headers option, which the standard WebSocket
      // cannot send (asked with a bearer token the handshake lacked, the probe passed and the socket was tried
      // again for ever). It answers what refused the handshake (401, 403: not logged in, or a page of an origin
      // a2.web.allowed-origins does not name), or 400 when that passed: this request was no handshake
      if (this.sessions.size > 0) {
        const bare = !this.client.socketSendsHeaders;
        try {
          await this.client.call("GET", this.client.url(this.contract, undefined, "/socket"), undefined,
            { signal: this.client.controller.signal, bare });
        } catch (failure) {
          let e = failure;
          if (e instanceof A2Error && e.status === 400) e = null;
          // a security filter's refusal, where the handshake lacked the headers; A2's own (an origin) says why itself
          if (bare && this.client.hasHeaders && e instanceof A2Error && (e.status === 401 || e.status === 403)
            && !refusedByA2.has(e)) {
            e = new A2Error(e.code, "the socket's handshake was refused (" + e.status + "): a WebSocket cannot send "
              + "the client's headers (such as Authorization: Bearer …); use transport 'sse', which sends them, or a "
              + "WebSocket option that authenticates its handshake another way (" + e.message + ")",
              { status: e.status, cause: failure });
          }
          if (e instanceof A2Error && !e.retryable) {
            for (const group of this.sessions.values()) for (const view of group.views) view.setStatus("error", e);
            this.sessions.clear();
            this.forget();
            return;
          }
        }
      }
    }
    await sleep(backoff(this.attempt++, this.client.backoff), this.client.controller.signal);
    if (this.client.closed) return;
    if (this.sessions.size === 0) {
      this.forget();
      return;
    }
    this.connect();
  }

  /**
   * Takes this line out of its client, unless another took its place: a line whose last view closed while
   * it waited to reconnect was closed then, and a view opened since has a line of its own, which stays.
   */
  forget() {
    if (this.client.sockets.get(this.contract) === this) this.client.sockets.delete(this.contract);
  }

  /** A ref for a presence frame, whose refusal `onRefused` hears. */
  presenceRef(onRefused) {
    const ref = "presence." + (++this.refs);
    this.presenceRefused.set(ref, onRefused);
    if (this.presenceRefused.size > 64) this.presenceRefused.delete(this.presenceRefused.keys().next().value);
    return ref;
  }

  /** Sends a frame if the socket is open and the frame is not of a size the server closed a socket for. */
  send(frame) {
    if (!this.open) return false;
    const text = JSON.stringify(frame);
    const bytes = utf8.encode(text).length;
    if (bytes >= this.client.socketFrameLimit) return false;
    this.largestSent = Math.max(this.largestSent, bytes);
    this.socket.send(text);
    return true;
  }

  subscribe(view) {
    let group = this.sessions.get(view.id);
    if (!group) this.sessions.set(view.id, group = { views: new Set(), pending: 0, position: null });
    view.subscribed = false;   // the session's frames reach a view once its subscription is confirmed
    group.views.add(view);
    if (!this.open) {
      if (!this.socket && !this.reconnecting) this.connect();
      return;   // connecting: onopen subscribes every session
    }
    if (group.position === null) {
      this.sendSubscribe(view.id, group);
    } else if (view.lastIndex < group.position) {
      // the subscription is past what this view needs: again from its index (the other views skip repeats)
      this.send({ type: "unsubscribe", session: view.id });
      this.sendSubscribe(view.id, group);
    } else if (group.pending === 0) {
      // what the subscription brings from now on is all the view needs
      view.subscribed = true;
      const sibling = [...group.views].find((v) => v !== view && v.subscribed);
      if (sibling) view.receivePresence({ snapshot: { participants: sibling.presence } });
      view.setStatus("live");
      if (view.reducer) view.readState();
    }
    // else: the subscription to come is confirmed for every view of the session at once
  }

  /** Subscribes a session after the lowest last index of its views. */
  sendSubscribe(id, group) {
    const after = Math.min(...[...group.views].map((view) => view.lastIndex));
    if (this.send({ type: "subscribe", session: id, after })) {
      group.pending++;
      group.position = after;
    }
  }

  unsubscribe(view) {
    const group = this.sessions.get(view.id);
    if (!group || !group.views.delete(view)) return;
    view.subscribed = false;
    if (group.views.size === 0) {
      this.sessions.delete(view.id);
      this.send({ type: "unsubscribe", session: view.id });
    }
    if (this.sessions.size === 0 && this.acks.size === 0) this.close();
  }

  /** Answers the stored events, or null when the socket cannot carry the push: the outbox then sends it over HTTP. */
  async push(entry, body, signal) {
    if (!this.socket && !this.reconnecting) this.connect();
    // not open (refused, or no network): HTTP tells which, and a 401 or 403 rejects the push as over SSE
    if (!this.open && !(await this.opened)) return null;
    if (signal.aborted) throw abortError(signal);
    const ref = entry.key + "." + (++this.refs);
    const answered = new Promise((resolve, reject) => {
      this.acks.set(ref, { resolve, reject });
      signal.addEventListener("abort", () => {
        this.acks.delete(ref);
        reject(abortError(signal));
      }, { once: true });
    });
    if (!this.send({ type: "push", ref, session: entry.session, ...body })) {
      this.acks.get(ref).resolve(null);   // closed meanwhile, or a frame of a size the server closed a socket for
      this.acks.delete(ref);
    }
    return answered;
  }

  receive(frame) {
    const group = frame.session !== undefined ? this.sessions.get(frame.session) : undefined;
    const views = group ? [...group.views].filter((view) => view.subscribed) : [];
    switch (frame.type) {
      case "subscribed":
        // the last subscribe sent is the one confirmed last: then every view of the session is in
        if (group && group.pending > 0 && --group.pending === 0) {
          for (const view of group.views) {
            view.subscribed = true;
            view.setStatus("live");
            if (view.reducer) view.readState();
          }
        }
        break;
      case "events":
        if (group && group.pending === 0 && frame.events.length) group.position = frame.events[frame.events.length - 1].index;
        for (const view of views) view.receiveEvents(frame.events);
        break;
      case "presence":
        for (const view of views) view.receivePresence(frame);
        break;
      case "cleared":
        if (group && group.pending === 0) group.position = Math.max(group.position, frame.index);
        for (const view of views) view.receiveCleared(frame.index);
        break;
      case "ack": {
        const ack = this.acks.get(frame.ref);
        this.acks.delete(frame.ref);
        if (ack) ack.resolve(frame.events);
        break;
      }
      case "error": {
        const error = new A2Error(frame.error.code, frame.error.message, { status: statusOf(frame.error.code) });
        const ack = frame.ref !== undefined ? this.acks.get(frame.ref) : undefined;
        const presenceRefused = frame.ref !== undefined ? this.presenceRefused.get(frame.ref) : undefined;
        if (presenceRefused) {
          // a presence write's refusal, never its subscription's: the views go on, and are told
          this.presenceRefused.delete(frame.ref);
          presenceRefused(error);
          if (group) for (const view of group.views) view.emit("error", error);
        } else if (ack) {
          this.acks.delete(frame.ref);
          ack.reject(error);
        } else if (frame.ref === undefined && frame.session === undefined) {
          // a frame the server could not read (over a2.web.max-push-bytes): frames are answered in order, so
          // it is the oldest push not answered, unless it was a presence write; over HTTP that push is
          // refused (413) or stored, never mistaken
          const [ref, oldest] = this.acks.entries().next().value ?? [];
          if (oldest) {
            this.acks.delete(ref);
            oldest.resolve(null);
          }
        } else if (group && (group.pending > 0 || frame.unsubscribed)) {
          // the subscription was refused (403, 404…), or the server ended it (the caller may no longer read the
          // session, "unsubscribed": true): this session's views stop, until the page calls reconnect(); others go on
          this.sessions.delete(frame.session);
          this.send({ type: "unsubscribe", session: frame.session });   // one confirmed before, if any
          for (const view of group.views) {
            view.subscribed = false;
            view.setStatus("error", error);
          }
        } else if (group) {
          for (const view of group.views) view.emit("error", error);
        }
        break;
      }
      // "ping" (the server's keep-alive), "pong", "unsubscribed": nothing to do beyond the idle watch
    }
  }

  close() {
    this.open = false;
    clearTimeout(this.idle);
    if (this.resolveOpened) this.resolveOpened(false);
    this.forget();
    if (this.socket) {
      const socket = this.socket;
      this.socket = null;
      socket.onclose = null;
      socket.onmessage = null;
      try {
        socket.close(1000);
      } catch {
        // closing a socket still connecting throws in some implementations
      }
      for (const ack of this.acks.values()) ack.reject(networkError(new Error("the socket closed")));
      this.acks.clear();
    }
  }
}

const utf8 = new TextEncoder();

function statusOf(code) {
  return { INVALID_PAYLOAD: 400, UNKNOWN_CONTRACT: 404, UNKNOWN_REDUCER: 404, NOT_FOUND: 404, METHOD_NOT_ALLOWED: 405,
    CONFLICT: 409, CONSUMER_DEAD_LETTERED: 409, PAYLOAD_TOO_LARGE: 413, UNAUTHORIZED: 401, FORBIDDEN: 403,
    STORE_UNAVAILABLE: 503, INTERNAL: 500 }[code] ?? 0;
}

// ---------------------------------------------------------------------------------------------
// AI replies (a2-spring-ai, docs/ai-replies.md): a reply is drawn from its events by rules a page easily
// gets wrong. Appending every reply.delta shows, after a takeover, a reply spliced from two attempts.

/**
 * Folds the events of AI replies, one at a time, into the replies they draw: `apply(event)` answers the
 * reply it changed (a new object; replies are never changed in place), or null; `replies` is the Map from
 * `replyTo` to reply. For a page that draws each event as it comes (`on("event", …)`); `replies(events)`
 * folds a whole view at once.
 */
export function createReplies() {
  let fold = replyFold(emptyFold());
  return {
    get replies() {
      return fold.state.shown;
    },
    apply: (event) => fold.apply(event),
    /** Forgets every reply (the session was cleared). */
    clear() {
      fold = replyFold(emptyFold());
    },
  };
}

function emptyFold() {
  return {
    shown: new Map(),      // replyTo -> the reply
    attempts: new Map(),   // replyTo -> the latest attempt seen, also of runs drawn as no reply (see tool.result)
    calls: new Map(),      // callId -> the replyTo of the reply whose model asked for it
    decisions: new Map(),  // callId -> the tool.approved or tool.rejected event that answered it
    answering: new Map(),  // index of a tool.approved or tool.rejected event -> the callId it answers
  };
}

/** A copy of a fold's state, to go on from where it stands while the Map it answered stays as it was. */
function copyFold(state) {
  return Object.fromEntries(Object.entries(state).map(([name, map]) => [name, new Map(map)]));
}

function replyFold(state) {
  const { shown, attempts, calls, decisions, answering } = state;

  function put(reply) {
    reply.toolCalls = Object.freeze(reply.toolCalls.map((c) => Object.freeze(c)));
    reply.approvals = Object.freeze(reply.approvals.map((a) => Object.freeze(a)));
    const frozen = Object.freeze(reply);
    shown.set(reply.replyTo, frozen);
    return frozen;
  }

  /** The reply of `p.replyTo` as attempt `p.attempt` sees it, or null when that attempt is an older one. */
  function current(p) {
    const latest = attempts.get(p.replyTo) ?? 0;
    if (p.attempt < latest) return null;   // a stalled attempt that woke up after another took over
    attempts.set(p.replyTo, p.attempt);
    const reply = shown.get(p.replyTo);
    if (!reply) {
      const callId = answering.get(p.replyTo);
      const continues = callId !== undefined ? calls.get(callId) : undefined;
      return { replyTo: p.replyTo, attempt: p.attempt, text: "", status: "thinking", toolCalls: [], approvals: [],
        ...(continues !== undefined ? { continues } : {}) };
    }
    if (p.attempt === reply.attempt) return { ...reply };
    // a newer attempt without reply.restarted (a log written before it had one) takes the reply over as it is
    const { error, reason, finishReason, usage, ...rest } = reply;
    return { ...rest, attempt: p.attempt, status: "thinking" };
  }

  function ended(reply) {
    return reply.status !== "thinking" && reply.status !== "streaming";
  }

  /** Two token counts added up (a run's model calls that reported them); a count one of them lacks is the other's. */
  function plus(sum, usage) {
    if (sum == null || usage == null) return sum ?? usage ?? null;
    const add = (a, b) => (a == null || b == null ? a ?? b ?? null : a + b);
    return { promptTokens: add(sum.promptTokens, usage.promptTokens),
      completionTokens: add(sum.completionTokens, usage.completionTokens), totalTokens: add(sum.totalTokens, usage.totalTokens) };
  }

  /** The calls (or approvals) with call `callId`'s changed. */
  function answered(list, callId, change) {
    return list.map((c) => (c.callId === callId ? { ...c, ...change } : c));
  }

  function decisionOf(event) {
    return event.type === "tool.approved" ? { decision: "approved" }
      : { decision: "rejected", ...(event.payload.reason != null ? { reason: event.payload.reason } : {}) };
  }

  function apply(event) {
    const p = event && event.payload;
    if (!p || typeof p !== "object") return null;
    switch (event.type) {
      case "reply.restarted": {
        const latest = attempts.get(p.replyTo) ?? 0;
        if (p.attempt < latest || (p.attempt === latest && shown.has(p.replyTo))) return null;   // not a newer attempt
        attempts.set(p.replyTo, p.attempt);
        const before = shown.get(p.replyTo);
        for (const call of before ? before.toolCalls : []) calls.delete(call.callId);
        const callId = answering.get(p.replyTo);
        const continues = before ? before.continues : callId !== undefined ? calls.get(callId) : undefined;
        // the reply is this text from here on, not the earlier attempt's (empty unless the attempt continues it)
        return put({ replyTo: p.replyTo, attempt: p.attempt, text: p.text ?? "", status: "thinking", toolCalls: [],
          approvals: [], ...(continues !== undefined ? { continues } : {}) });
      }
      case "reply.delta": {
        const reply = current(p);
        if (!reply || ended(reply)) return null;   // text after the attempt's end is no part of the reply
        reply.text += p.text ?? "";
        reply.status = "streaming";
        return put(reply);
      }
      case "reply.completed":
      case "reply.stopped":
      case "reply.failed": {
        const reply = current(p);
        // one end: a second one of the same attempt changes nothing, but a Stop ends a reply that waits for approval
        // (its waiting calls were answered as stopped just before)
        if (!reply || (ended(reply) && !(event.type === "reply.stopped" && reply.status === "waiting"))) return null;
        // what the run's model calls cost, as its end says: a waiting reply's came with its approval requests
        reply.usage = plus(reply.usage, p.usage);
        if (event.type === "reply.completed") {
          reply.status = "completed";
          reply.finishReason = p.finishReason ?? null;
        } else if (event.type === "reply.stopped") {
          reply.status = "stopped";
          reply.reason = p.reason ?? null;
        } else {
          reply.status = "failed";
          reply.error = p.error ?? null;
        }
        return put(reply);
      }
      case "tool.call": {
        const reply = current(p);
        if (!reply || ended(reply)) return null;
        calls.set(p.callId, p.replyTo);
        reply.toolCalls = reply.toolCalls.concat({ callId: p.callId, name: p.name, arguments: p.arguments, step: p.step });
        reply.status = "thinking";   // its tools run, then the model is asked again
        return put(reply);
      }
      case "tool.approval.requested": {
        const reply = current(p);
        // the run's end: several calls of one answer may wait, an event each
        if (!reply || (ended(reply) && reply.status !== "waiting")) return null;
        calls.set(p.callId, p.replyTo);
        const decided = decisions.get(p.callId);
        reply.approvals = reply.approvals.concat({ callId: p.callId, name: p.name, arguments: p.arguments, step: p.step,
          ...(decided ? decisionOf(decided) : {}) });
        reply.usage = plus(reply.usage, p.usage);   // the first request of the run carries its usage
        reply.status = "waiting";
        return put(reply);
      }
      case "tool.result": {
        const answer = { result: p.result, rejected: p.rejected === true };
        if (calls.get(p.callId) === p.replyTo) {   // a call of the same reply
          const reply = current(p);
          if (!reply || ended(reply)) return null;
          reply.toolCalls = answered(reply.toolCalls, p.callId, answer);
          reply.approvals = answered(reply.approvals, p.callId, answer);
          reply.status = "thinking";   // the model is asked again with the result
          return put(reply);
        }
        // the run of a person's answer ran a call an earlier reply asked for: the result is that call's, and
        // the run is a reply only once it writes one (it writes none while other calls of that answer wait)
        if (p.attempt < (attempts.get(p.replyTo) ?? 0)) return null;
        attempts.set(p.replyTo, p.attempt);
        const replyTo = calls.get(p.callId);
        const reply = replyTo !== undefined ? shown.get(replyTo) : undefined;
        if (!reply) return null;
        const approvals = answered(reply.approvals, p.callId, answer);
        // a person's decision ran the call (not a Stop, whose reply.stopped follows): once none of the reply's
        // calls waits, nothing waits, and its answer goes on in the reply to the decision ("continues")
        const continued = reply.status === "waiting" && answering.has(p.replyTo) && approvals.every((a) => a.result !== undefined);
        return put({ ...reply, toolCalls: answered(reply.toolCalls, p.callId, answer), approvals,
          ...(continued ? { status: "continued" } : {}) });
      }
      case "tool.approved":
      case "tool.rejected": {
        if (typeof p.callId !== "string") return null;
        decisions.set(p.callId, event);
        if (event.index != null) answering.set(event.index, p.callId);
        const replyTo = calls.get(p.callId);
        const reply = replyTo !== undefined ? shown.get(replyTo) : undefined;
        // a decision on a call answered already (a Stop answered it, or another device's decision ran) runs nothing
        if (!reply || !reply.approvals.some((a) => a.callId === p.callId && a.result === undefined)) return null;
        return put({ ...reply, approvals: answered(reply.approvals, p.callId, decisionOf(event)) });
      }
      default:
        return null;
    }
  }

  return { state, apply };
}

/**
 * The folds `replies` made lately, to go on from: a view's events are a new array on every change, which
 * begins with the events of the one before (until a clear). Their pending events, at the end, are folded
 * anew each time (a push the server refuses is withdrawn).
 */
const recentFolds = [];
const folded = new WeakMap();

/**
 * The AI replies a view's events draw, by `replyTo` in the order they began: `replies(room.view.events)`.
 * Pure: the same Map for the same array, and a new one (in which only the replies that changed are new
 * objects) for a new array; it folds only what a view added since the array it was given before, so a page
 * may call it on every render. Do not change the Map.
 */
export function replies(events) {
  const answered = folded.get(events);
  if (answered) return answered;
  let stored = events.length;
  while (stored > 0 && events[stored - 1].index == null) stored--;
  const base = recentFolds.find((f) => f.stored <= stored && startsWith(events, f.events, f.stored));
  let fold = replyFold(base ? copyFold(base.state) : emptyFold());
  for (let i = base ? base.stored : 0; i < stored; i++) fold.apply(events[i]);
  if (!base || base.stored < stored) {
    recentFolds.unshift({ events, stored, state: fold.state });
    if (recentFolds.length > 4) recentFolds.pop();
  }
  if (stored < events.length) {
    fold = replyFold(copyFold(fold.state));
    for (let i = stored; i < events.length; i++) fold.apply(events[i]);
  }
  folded.set(events, fold.state.shown);
  return fold.state.shown;
}

/** Whether `events` begins with the first `count` events of `earlier`, the same objects. */
function startsWith(events, earlier, count) {
  if (events === earlier) return true;
  for (let i = count - 1; i >= 0; i--) if (events[i] !== earlier[i]) return false;
  return true;
}
