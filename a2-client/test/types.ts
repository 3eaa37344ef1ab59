// The declarations as an editor reads them: compiles with tsc --strict, and each @ts-expect-error is
// an error the types must catch (npm run check-types; TypeScript is not a dependency).
import { createClient, createReplies, replies, A2Error, type Reply, type StoredEvent } from "../src/client.js";
import { bindReact } from "../src/react.js";
type Chat = {
  events: { "message.sent": { text: string; author: string; thread: string }; "reply.delta": { replyTo: number; text: string } };
  presence: { online: boolean; typing: boolean };
  state: { summary: { messages: number; replies: number } };
};
const a2 = createClient<{ chat: Chat }>({ participant: "ann" });
const room = a2.session("chat", "lobby", { state: "summary" });
const n: number | undefined = room.view.state?.state.messages;
room.on("event", (e) => {
  if (e.type === "message.sent") { const t: string = e.payload.text; void t; }
  if (e.type === "reply.delta") { const r: number = e.payload.replyTo; void r; const c = room.causeOf(e); void c; }
});
room.push([{ type: "message.sent", payload: { text: "hi", author: "ann", thread: "ann" } }], { presence: { typing: false } });
// @ts-expect-error unknown type
room.push([{ type: "nope", payload: {} }]);
// @ts-expect-error wrong payload
room.push([{ type: "message.sent", payload: { text: 1 } }]);
room.setPresence({ online: true });
// @ts-expect-error unknown contract
a2.session("other", "x");
room.on("status", (s, e) => { if (e) { const code: string = e.code; void code; } });
const err = new A2Error("FORBIDDEN", "no", { status: 403 });
void err.retryable; void n;
declare const React: any;
const { useView, useSession, usePresence, useReplies } = bindReact(React);
// a view the component opens itself: null until open, and the hooks take null
const own = useView(a2, "chat", "lobby", { state: "summary" });
const ownView = useSession(own);
const messages: number | undefined = ownView?.state?.state.messages; void messages;
// @ts-expect-error a view that may not be open yet is null
void useSession(own).events;
void usePresence(own, { typing: true })?.ann?.typing?.value;
void useReplies(own)?.size;
// @ts-expect-error a reducer the contract has not
useView(a2, "chat", "lobby", { state: "nope" });
const v = useSession(room); const len: number = v.events.length; void len;
const p = usePresence(room, { online: true }); void p.ann?.online?.value;
const x: StoredEvent<Chat["events"]> | null = null; void x;
// @ts-expect-error usePresence writes the contract's fields only
usePresence(room, { typign: true });
// @ts-expect-error with their values' types
usePresence(room, { online: "yes" });
// a contract written as interfaces, which have no index signature
interface Sent { text: string }
interface ChatEvents { "message.sent": Sent }
interface ChatPresence { typing: boolean }
interface ChatContract { events: ChatEvents; presence: ChatPresence }
const typed = createClient<{ chat: ChatContract }>().session("chat", "x");
typed.on("event", (e) => { const t: string = e.payload.text; void t; });
typed.setPresence({ typing: true });
void usePresence(typed, { typing: true }).ann?.typing?.value;
// AI replies, drawn from a view's events
const reply: Reply | undefined = replies(room.view.events).get(1);
if (reply) {
  const text: string = reply.text; void text;
  // @ts-expect-error a status replies have not
  if (reply.status === "done") void 0;
  const result: string | undefined = reply.approvals[0]?.result; void result;
}
const fold = createReplies();
room.on("event", (e) => { const changed: Reply | null = fold.apply(e); void changed; });
const hooked: ReadonlyMap<number, Reply> = useReplies(room); void hooked;
