// Types of A2's client. A contract is described once, by the page, as a type:
//
//   type Chat = {
//     events: { "message.sent": { text: string; author: string }; "reply.delta": { replyTo: number; text: string } };
//     presence: { typing: boolean; online: boolean };
//     state: { summary: { messages: number } };
//   };
//   const client = createClient<{ chat: Chat }>({ participant: "ann" });
//   const room = client.session("chat", "lobby", { state: "summary" });   // payloads, presence and state typed

/**
 * What a contract holds: event type → payload, presence field → value, reducer → state. Objects, not
 * records, so that a contract written as interfaces (which have no index signature) is one.
 */
export interface ContractShape {
  events: object;
  presence?: object;
  state?: object;
}

/** The contracts of a server by name. */
export type Contracts = Record<string, ContractShape>;

type PresenceOf<C extends ContractShape> = C["presence"] extends object ? C["presence"] : Record<string, unknown>;
/** The states of a contract's reducers, by reducer. */
export type StateOf<C extends ContractShape> = C["state"] extends object ? C["state"] : Record<string, unknown>;

/** The consumer run that wrote an event: its consumer, lane, the index of the event it answers, the attempt. */
export interface Cause {
  consumer: string;
  lane?: string;
  index: number;
  attempt: number;
}

/** A stored event, as the stream delivers it. */
export type StoredEvent<E extends object = Record<string, unknown>> = {
  [T in keyof E & string]: {
    index: number;
    id: string;
    type: T;
    payload: E[T];
    createdAt: string;
    cause?: Cause | null;
    pending?: undefined;
  };
}[keyof E & string];

/** An event pushed by this page and not yet back from the stream (optimistic). */
export type PendingEvent<E extends object = Record<string, unknown>> = {
  [T in keyof E & string]: { index: null; id: string; type: T; payload: E[T]; createdAt: null; cause: null; pending: true };
}[keyof E & string];

/** An event to push; `id` is generated (a random UUID) when absent, and kept for every retry. */
export type NewEvent<E extends object = Record<string, unknown>> = {
  [T in keyof E & string]: { type: T; payload: E[T]; id?: string };
}[keyof E & string];

/** A participant's fields: field → {value, at}. */
export type PresenceFields<P extends object = Record<string, unknown>> = {
  [F in keyof P]?: { value: P[F]; at: string };
};

export type Presence<P extends object = Record<string, unknown>> = Record<string, PresenceFields<P>>;

export interface PresencePatch {
  participant: string;
  field: string;
  value: unknown;
  at: string;
}

export type Status = "connecting" | "live" | "reconnecting" | "error" | "closed";

/**
 * A2's error codes (§11), and the client's own: NETWORK (no answer), ABORTED, CLOSED, UNEXPECTED_RESPONSE
 * (a stream answered with something other than an event stream, or a push or read with something other than
 * JSON, such as a login page a redirect led to).
 */
export type ErrorCode =
  | "INVALID_PAYLOAD" | "UNKNOWN_CONTRACT" | "UNKNOWN_REDUCER" | "NOT_FOUND" | "METHOD_NOT_ALLOWED" | "CONFLICT"
  | "CONSUMER_DEAD_LETTERED" | "PAYLOAD_TOO_LARGE" | "UNAUTHORIZED" | "FORBIDDEN" | "STORE_UNAVAILABLE" | "INTERNAL"
  | "NETWORK" | "ABORTED" | "CLOSED" | "UNEXPECTED_RESPONSE" | (string & {});

export class A2Error extends Error {
  constructor(code: ErrorCode, message: string, options?: { status?: number; cause?: unknown });
  readonly name: "A2Error";
  /** A2's code, such as FORBIDDEN; NETWORK when no answer came. */
  readonly code: ErrorCode;
  /** The HTTP status (0 when there was none). */
  readonly status: number;
  /** Whether the same request again may succeed: the network, a 5xx, 408 or 429. */
  readonly retryable: boolean;
}

/** Where pending pushes wait until answered. */
export interface OutboxStorage {
  load(): Promise<OutboxEntry[]>;
  put(entry: OutboxEntry): Promise<void>;
  delete(key: string): Promise<void>;
}

export interface OutboxEntry {
  key: string;
  seq: number;
  contract: string;
  session: string;
  events: { id: string; type: string; payload: unknown }[];
  presence?: { participant?: string; values: Record<string, unknown>; at?: string | number };
}

export class MemoryOutbox implements OutboxStorage {
  load(): Promise<OutboxEntry[]>;
  put(entry: OutboxEntry): Promise<void>;
  delete(key: string): Promise<void>;
}

export class IndexedDbOutbox implements OutboxStorage {
  constructor(name?: string);
  load(): Promise<OutboxEntry[]>;
  put(entry: OutboxEntry): Promise<void>;
  delete(key: string): Promise<void>;
}

export interface ClientOptions {
  /** Where A2's routes are: "/a2" by default; absolute in Node ("http://localhost:8080/a2"). */
  baseUrl?: string;
  /**
   * "sse" (a stream per view) or "socket" (one WebSocket per contract for every view; a push goes over
   * HTTP, with the same ids, when the socket does not open or cannot carry its frame).
   */
  transport?: "sse" | "socket";
  /** Who presence writes are for; the server takes the caller's name when absent. */
  participant?: string;
  /**
   * Extra request headers, such as Authorization, or a function answering them (asked for each request): sent
   * with every request and the SSE stream, never on a WebSocket's handshake, which cannot carry headers.
   */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  credentials?: RequestCredentials;
  fetch?: typeof fetch;
  /** The standard one by default, whose handshake sends cookies only; one of the page's may authenticate it otherwise. */
  WebSocket?: { new (url: string): WebSocket };
  /** The CSRF token sent as X-XSRF-TOKEN; Spring Security's XSRF-TOKEN cookie by default. */
  csrf?: () => string | null;
  /** Where pending pushes are kept: IndexedDB in browsers, memory elsewhere. */
  outbox?: OutboxStorage;
  /** The server's a2.presence.ttl in ms (60000 by default): kept fields are written every third of it. */
  presenceTtl?: number;
  /**
   * Reconnect and retry delays in ms, doubling with jitter (250 to 10000 by default); a stream's starts
   * again once the stream delivered something.
   */
  backoff?: { initial?: number; max?: number };
  /** Silence in ms after which a stream or socket is taken for dead (45000; the server pings every 15 s). */
  idleTimeout?: number;
  /**
   * The page's clock in epoch ms (Date.now by default). Presence writes' `at` are on the server's clock,
   * which the server's presence frames and answers tell (`now`): this clock only measures the difference.
   */
  now?: () => number;
  /** Aborting it closes the client. */
  signal?: AbortSignal;
}

export interface SessionOptions<R extends string = string> {
  /** Start after this index (0, the whole history after the latest clear, by default). */
  after?: number;
  /** A reducer whose state the view keeps (?state= on SSE; read after each batch on the socket). */
  state?: R;
  /** Show pushed events at once, before the stream brings them back (true by default). */
  optimistic?: boolean;
  signal?: AbortSignal;
}

export interface PushOptions<P extends object = Record<string, unknown>> {
  /** A presence write stored with the events, such as {typing: false}. */
  presence?: { [F in keyof P]?: P[F] | null } | { participant?: string; values: { [F in keyof P]?: P[F] | null }; at?: string | number };
  /** Stops waiting and retrying (the server may still have stored the batch). */
  signal?: AbortSignal;
}

export interface SessionView<C extends ContractShape = ContractShape, S = unknown> {
  /** Confirmed events in index order (after the latest clear), then pending ones. */
  readonly events: ReadonlyArray<StoredEvent<C["events"]> | PendingEvent<C["events"]>>;
  readonly pending: ReadonlyArray<PendingEvent<C["events"]>>;
  readonly presence: Presence<PresenceOf<C>>;
  readonly state: { index: number; state: S } | null;
  readonly status: Status;
  readonly error: A2Error | null;
  /** The last index seen: a reconnect resumes after it. */
  readonly lastIndex: number;
}

export interface SessionHandlers<C extends ContractShape, S> {
  event: (event: StoredEvent<C["events"]>, info: { wasPending: boolean }) => void;
  events: (events: StoredEvent<C["events"]>[]) => void;
  pending: (events: PendingEvent<C["events"]>[]) => void;
  failed: (failure: { events: PendingEvent<C["events"]>[]; error: A2Error }) => void;
  presence: (presence: Presence<PresenceOf<C>>, update: { snapshot?: { participants: Presence<PresenceOf<C>> }; patches?: PresencePatch[] }) => void;
  state: (state: { index: number; state: S }) => void;
  cleared: (index: number) => void;
  status: (status: Status, error: A2Error | null) => void;
  error: (error: A2Error) => void;
}

export interface Session<C extends ContractShape = ContractShape, S = unknown> {
  readonly contract: string;
  readonly id: string;
  readonly closed: boolean;
  readonly view: SessionView<C, S>;
  readonly events: SessionView<C, S>["events"];
  getSnapshot(): SessionView<C, S>;
  subscribe(listener: () => void): () => void;
  on<K extends keyof SessionHandlers<C, S>>(type: K, handler: SessionHandlers<C, S>[K]): () => void;
  /** Stored once whatever the network does: retried whole with the same ids until answered. */
  push(events: NewEvent<C["events"]>[], options?: PushOptions<PresenceOf<C>>): Promise<Array<{ index: number; id: string }>>;
  /** Writes this participant's fields, kept alive while the view is open; null removes a field. */
  setPresence(values: { [F in keyof PresenceOf<C>]?: PresenceOf<C>[F] | null }, options?: { keepAlive?: boolean; signal?: AbortSignal }): Promise<unknown>;
  /** The event a consumer's event answers (its cause's trigger), when it is in the view. */
  causeOf(event: StoredEvent<C["events"]>): StoredEvent<C["events"]> | null;
  /** After status "error" (a new login, say): connect again. */
  reconnect(): void;
  close(): void;
}

export interface A2Client<Cs extends Contracts = Contracts> {
  readonly closed: boolean;
  /** A live view; once the client is closed, a view already closed that opens nothing. */
  session<K extends keyof Cs & string, R extends keyof StateOf<Cs[K]> & string = never>(
    contract: K, id: string, options?: SessionOptions<R>): Session<Cs[K], [R] extends [never] ? unknown : StateOf<Cs[K]>[R]>;
  push<K extends keyof Cs & string>(contract: K, id: string, events: NewEvent<Cs[K]["events"]>[],
    options?: PushOptions<PresenceOf<Cs[K]>>): Promise<Array<{ index: number; id: string }>>;
  /** Ends every view and socket; a push after it rejects with CLOSED. */
  close(): void;
}

export function createClient<Cs extends Contracts = Contracts>(options?: ClientOptions): A2Client<Cs>;

/** A random UUID (v4), also where crypto.randomUUID is missing. */
export function newId(): string;

/** A tool the model asked for in a reply (`tool.call`), with what it answered once it ran (`tool.result`). */
export interface ReplyToolCall {
  callId: string;
  name: string;
  /** The arguments as the model wrote them (JSON). */
  arguments: string;
  /** The model call of the run that asked for it. */
  step: number;
  result?: string;
  /** Whether the result says a person rejected the call. */
  rejected?: boolean;
}

/**
 * A call that waits for a person (`tool.approval.requested`): push `tool.approved` or `tool.rejected` naming its callId.
 * It waits no more once it has a `result`: the tool's, a rejection's, or, when a Stop ended the reply while it waited,
 * `rejected` with a result saying it was stopped (a decision pushed after that changes nothing).
 */
export interface ReplyApproval extends ReplyToolCall {
  /** What a person answered, from the moment the page pushed it (pending) on, unless the call was answered before. */
  decision?: "approved" | "rejected";
  /** The rejection's reason. */
  reason?: string;
}

/** A reply's token usage, every model call of its run that reported its tokens added up; any count may be unknown. */
export interface ReplyUsage {
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
}

/** An AI reply (a2-spring-ai) as its events draw it: only its latest attempt counts. */
export interface Reply {
  /** The index of the event the run answers: the reply's key. */
  replyTo: number;
  /** The run's attempt whose reply this is: a newer one (a takeover) replaced the text of the ones before. */
  attempt: number;
  /** The reply's text, every model call of the run together. */
  text: string;
  /**
   * thinking: begun, the model not streaming (a new attempt starts, tools run); streaming; then how it ended:
   * completed, stopped (a Stop), failed, or waiting (a tool waits for a person: see approvals). A Stop that comes
   * while it waits ends it stopped; once people's decisions have run every call it waited for, it is continued:
   * the answer goes on in the reply to the decision, whose continues is this reply's replyTo.
   */
  status: "thinking" | "streaming" | "completed" | "stopped" | "failed" | "waiting" | "continued";
  /** For the reply to a tool.approved or tool.rejected event: the replyTo of the reply whose call it answered. */
  continues?: number;
  /** When completed: as Spring AI names it (STOP, LENGTH…), null when the model told none. */
  finishReason?: string | null;
  /**
   * Once it ended (completed, waiting, stopped or failed): the tokens of the run's model calls that reported them,
   * null when none did (a stream cancelled by a Stop usually reports none).
   */
  usage?: ReplyUsage | null;
  /** When stopped: what stopped it. */
  reason?: string | null;
  /** When failed: the failure and its causes. */
  error?: string | null;
  toolCalls: ReadonlyArray<ReplyToolCall>;
  approvals: ReadonlyArray<ReplyApproval>;
}

/** What the reply helpers read of an event: a view's events, stored or pending, are such. */
export interface ReplyInput {
  type: string;
  payload: unknown;
  index?: number | null;
}

/**
 * The AI replies a view's events draw, by replyTo in the order they began: `replies(room.view.events)`. The
 * same Map for the same array; a new array that begins with an earlier one's events is folded from where that
 * one stood, so it may be called on every render. Do not change the Map.
 */
export function replies(events: ReadonlyArray<ReplyInput>): ReadonlyMap<number, Reply>;

/** Folds events one at a time, for a page that draws each as it comes. */
export interface ReplyFold {
  /** Every reply so far, by replyTo. */
  readonly replies: ReadonlyMap<number, Reply>;
  /** Answers the reply the event changed (a new object), or null when it changed none. */
  apply(event: ReplyInput): Reply | null;
  /** Forgets every reply (the session was cleared). */
  clear(): void;
}

export function createReplies(): ReplyFold;
