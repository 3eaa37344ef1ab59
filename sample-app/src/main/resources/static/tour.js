// The tour's chat page, on A2's client (served by the starter at /a2/client.js): the client keeps
// the room's view live and resumed, sends pushes through its outbox (stored once whatever the
// network does) and keeps presence alive. What is here is the tour's own: drawing the room.
// Everything it draws is text, never markup: messages come from users.
import { createClient, createReplies } from "/a2/client.js";

const params = new URLSearchParams(location.search);
const room = params.get("room") || "lobby";
// kept per tab (sessionStorage): a reload keeps this window's name, and another window's ?name= is not taken
const me = params.get("name") || sessionStorage.getItem("a2-tour-name") || "guest-" + Math.random().toString(36).slice(2, 6);
sessionStorage.setItem("a2-tour-name", me);
const $ = (id) => document.getElementById(id);

const a2 = createClient({ participant: me, presenceTtl: 30000 });   // the sample's a2.presence.ttl
const chat = a2.session("chat", room, { state: "summary" });

const messages = new Map();   // event id -> the message's element (pending ones too)

function item(className, author, text) {
  const li = document.createElement("li");
  li.className = className;
  const who = document.createElement("span");
  who.className = "author";
  who.textContent = author;
  const body = document.createElement("span");
  body.className = "text";
  body.textContent = text;
  const state = document.createElement("span");
  state.className = "state";
  li.append(who, body, state);
  return li;
}

function show(li) {
  const list = $("messages");
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.append(li);
  if (atBottom) list.scrollTop = list.scrollHeight;
}

/** A message: shown at once when sent from this page (pending), given its index when stored. */
function showMessage(event) {
  const p = event.payload;
  let li = messages.get(event.id);
  if (!li) {
    li = item("message" + (p.author === me ? " mine" : ""), p.author, p.text);
    messages.set(event.id, li);
    show(li);
  }
  li.classList.toggle("pending", event.pending === true);
  if (event.index !== null) {
    li.dataset.index = event.index;
    li.id = "message-" + event.index;
    replyThreads.set(event.index, p.thread);   // the reply to this message belongs to its thread
  }
}

// --- the assistant's answers (a2-spring-ai: reply.*, tool.*): everything about drawing replies is here --
// The client's createReplies() folds the reply events as docs/ai-replies.md says a page must: by replyTo,
// only the latest attempt's text (reply.restarted replaces it), an older attempt's late events ignored. The
// page draws each reply it answers changed.
const answers = createReplies();
const replies = new Map();         // replyTo index -> the reply's element
const replyThreads = new Map();    // index of a message -> its thread, where the reply to it belongs
const CLASSES = { thinking: "streaming", streaming: "streaming", completed: "done", stopped: "stopped", failed: "failed",
  waiting: "waiting", continued: "done" };

function drawReply(reply) {
  let li = replies.get(reply.replyTo);
  if (!li) {
    // the reply to an approval continues the reply that asked for the tool, in its thread
    const asked = reply.continues !== undefined ? replies.get(reply.continues) : null;
    const thread = asked ? asked.dataset.thread : replyThreads.get(reply.replyTo) || "";
    li = item("reply", "assistant → " + thread, "");
    li.dataset.replyTo = reply.replyTo;
    li.dataset.thread = thread;
    replies.set(reply.replyTo, li);
    show(li);
  }
  const going = reply.status === "thinking" || reply.status === "streaming";
  li.className = "reply " + CLASSES[reply.status] + (reply.attempt > 1 ? " restarted" : "");
  li.querySelector(".text").textContent = reply.text;
  li.querySelector(".state").textContent = reply.status === "failed" ? "failed: " + reply.error
    : reply.status === "waiting" ? "waiting for approval"
    : going && reply.attempt > 1 ? "restarted (attempt " + reply.attempt + ")" : "";
  for (const approval of reply.approvals) drawApproval(approval, li.dataset.thread);
}

function drawApproval(approval, thread) {
  let li = $("approval-" + approval.callId);
  if (!li) {
    li = item("approval", "assistant → " + thread, "wants to run " + approval.name + " " + approval.arguments);
    li.id = "approval-" + approval.callId;
    const decide = (type, payload) => () => chat.push([{ type, payload }]).catch(() => {});   // a failure is drawn by "failed"
    const approve = document.createElement("button");
    approve.textContent = "Approve";
    approve.className = "approve";
    approve.onclick = decide("tool.approved", { callId: approval.callId });
    const reject = document.createElement("button");
    reject.textContent = "Reject";
    reject.className = "reject";
    reject.onclick = decide("tool.rejected", { callId: approval.callId, reason: "rejected on the page" });
    li.querySelector(".state").append(approve, reject);
    show(li);
  }
  if (approval.result !== undefined) {
    li.classList.add(approval.rejected ? "rejected" : "approved");
    li.querySelector(".state").textContent = approval.rejected ? "rejected" : "approved: " + approval.result;
  }
}

function renderAssistant(event) {
  const reply = answers.apply(event);
  if (reply) drawReply(reply);
  // a reply of my thread that streams, or waits for an approval: Stop ends either
  const mine = [...replies.values()].some((li) => li.dataset.thread === me
    && (li.classList.contains("streaming") || li.classList.contains("waiting")));
  $("stop").hidden = !mine;
  if (!mine) $("stop").disabled = false;
}
// ---------------------------------------------------------------------------------------------------

function apply(event) {
  switch (event.type) {
    case "message.sent":
      showMessage(event);
      break;
    case "message.delivered": {
      const li = $("message-" + event.payload.index);
      if (li) li.classList.add("delivered");
      break;
    }
    default:
      renderAssistant(event);
  }
}

function renderPeople(presence) {
  const list = $("people");
  list.replaceChildren();
  const typing = [];
  for (const name of Object.keys(presence).sort()) {
    const fields = presence[name];
    const isTyping = fields.typing && fields.typing.value;
    if (!(fields.online && fields.online.value) && !isTyping) continue;
    const li = document.createElement("li");
    li.textContent = name + (name === me ? " (you)" : "");
    li.dataset.participant = name;
    if (isTyping) li.classList.add("typing-now");
    list.append(li);
    if (isTyping && name !== me) typing.push(name);
  }
  $("typing").textContent = typing.length === 0 ? ""
    : typing.join(", ") + (typing.length === 1 ? " is typing…" : " are typing…");
}

chat.on("event", apply);
chat.on("pending", (events) => events.filter((e) => e.type === "message.sent").forEach(showMessage));
chat.on("failed", ({ events, error }) => {
  for (const event of events) {
    const li = messages.get(event.id);
    if (li) li.remove();
    messages.delete(event.id);
    if (event.type === "message.sent" && !$("text").value) $("text").value = event.payload.text;
  }
  alert(error.code + ": " + error.message);
});
chat.view.pending.filter((e) => e.type === "message.sent").forEach(showMessage);   // from the outbox of an earlier load
chat.on("presence", renderPeople);
chat.on("state", ({ state }) => {
  const count = (n, one, many) => n + " " + (n === 1 ? one : many);
  $("summary").textContent = count(state.messages, "message", "messages") + " · "
    + count(state.replies, "reply completed", "replies completed");
});
chat.on("cleared", (index) => {
  $("messages").replaceChildren();
  messages.clear();
  replies.clear();
  answers.clear();
  $("stop").hidden = true;
  $("stop").disabled = false;
  const li = document.createElement("li");
  li.className = "notice";
  li.textContent = "The room was cleared (marker " + index + ").";
  show(li);
});
chat.on("status", (status, error) => {
  // an error is told whole: "INVALID_PAYLOAD" alone does not say the room's name is what is wrong
  const label = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", closed: "closed" }[status]
    || (error ? error.code + ": " + error.message : status);
  $("connection").textContent = label;
  $("connection").className = "connection" + (status === "live" ? " live" : "");
  $("connection").title = error ? error.message : "";
});

// presence: online while the page is open, typing while typing; the client keeps both alive and
// removes them when the page goes
let typingTimer = null;
let typing = false;
function setTyping(now) {
  if (now === typing) return;
  typing = now;
  chat.setPresence({ typing: now }, { keepAlive: now }).catch(() => {});
}
$("text").addEventListener("input", () => {
  setTyping($("text").value.length > 0);
  clearTimeout(typingTimer);
  typingTimer = setTimeout(() => setTyping(false), 3000);
});

async function call(method, path, body) {
  const options = { method, headers: { "Accept": "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const answer = await response.json().catch(() => null);
  if (!response.ok) throw new Error(answer && answer.error ? answer.error.code + ": " + answer.error.message : response.statusText);
  return answer;
}

$("composer").onsubmit = (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("text").value = "";
  clearTimeout(typingTimer);
  typing = false;
  // the message and "no longer typing" land in one transaction; a failure is drawn by "failed"
  chat.push([{ type: "message.sent", payload: { text, author: me, thread: me } }], { presence: { typing: false } })
    .catch(() => {});
};
$("stop").onclick = () => {
  $("stop").disabled = true;   // one Stop: the button goes once the reply has ended
  chat.push([{ type: "stop.requested", payload: { thread: me } }]).catch(() => { $("stop").disabled = false; });
};
$("count").onclick = async () => {
  const answer = await call("GET", "/rooms/" + encodeURIComponent(room) + "/words");
  $("words").textContent = answer.words + " words (through event " + answer.through + ")";
};
$("refuse").onsubmit = async (e) => {
  e.preventDefault();
  const answer = await call("PUT", "/demo/refused-word", { word: $("refused").value });
  $("refused").value = answer.word;
};
$("clear").onclick = () => call("DELETE", "/a2/chat/sessions/" + encodeURIComponent(room)).catch((err) => alert(err.message));
$("rename").onsubmit = (e) => {
  e.preventDefault();
  const name = $("me").value.trim();
  if (name) location.search = new URLSearchParams({ room, name });
};
$("go").onsubmit = (e) => {
  e.preventDefault();
  const next = $("room").value.trim();
  if (next) location.search = new URLSearchParams({ room: next, name: me });
};

$("room-name").textContent = room;
$("me").value = me;
$("room").value = room;
document.title = room + " · A2 tour";
call("GET", "/demo/refused-word").then((answer) => $("refused").value = answer.word).catch(() => {});
chat.setPresence({ online: true }).catch(() => {});
