// The tour's chat page, on A2's client (served by the starter at /a2/client.js): the client keeps
// the room's view live and resumed, sends pushes through its outbox (stored once whatever the
// network does) and keeps presence alive. What is here is the tour's own: drawing the room.
// Everything it draws is text, never markup: messages come from users.
import { createClient } from "/a2/client.js";

const params = new URLSearchParams(location.search);
const room = params.get("room") || "lobby";
const me = params.get("name") || localStorage.getItem("a2-tour-name") || "guest-" + Math.random().toString(36).slice(2, 6);
localStorage.setItem("a2-tour-name", me);
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
// A reply is keyed by replyTo (the index of the event its run answers). Each event names the attempt
// of the run that wrote it: reply.restarted drops the partial text of the attempt it replaces, and
// text of an older attempt (a stalled instance waking up) is not the reply any more.
const replies = new Map();         // replyTo index -> the reply's element
const replyThreads = new Map();    // index of an event a run answers -> the thread of its reply
const callThreads = new Map();     // tool call id -> the thread it was asked in

function replyItem(replyTo) {
  let li = replies.get(replyTo);
  if (!li) {
    const thread = replyThreads.get(replyTo) || "";
    li = item("reply streaming", "assistant → " + thread, "");
    li.dataset.replyTo = replyTo;
    li.dataset.thread = thread;
    li.dataset.attempt = "0";
    replies.set(replyTo, li);
    show(li);
  }
  return li;
}

// whether the event is of the attempt the reply shows (taking a newer attempt as the current one)
function current(li, attempt) {
  if (attempt < Number(li.dataset.attempt)) return false;
  li.dataset.attempt = attempt;
  return true;
}

function endReply(li, state, note) {
  li.classList.remove("streaming");
  li.classList.add(state);
  li.querySelector(".state").textContent = note || "";
}

function approvalItem(p, thread) {
  const li = item("approval", "assistant → " + thread, "wants to run " + p.name + " " + p.arguments);
  li.id = "approval-" + p.callId;
  const decide = (type, payload) => () => chat.push([{ type, payload }]).catch(() => {});   // a failure is drawn by "failed"
  const approve = document.createElement("button");
  approve.textContent = "Approve";
  approve.className = "approve";
  approve.onclick = decide("tool.approved", { callId: p.callId });
  const reject = document.createElement("button");
  reject.textContent = "Reject";
  reject.className = "reject";
  reject.onclick = decide("tool.rejected", { callId: p.callId, reason: "rejected on the page" });
  li.querySelector(".state").append(approve, reject);
  return li;
}

function renderAssistant(event) {
  const p = event.payload;
  switch (event.type) {
    case "reply.delta": {
      const li = replyItem(p.replyTo);
      if (current(li, p.attempt)) li.querySelector(".text").textContent += p.text;
      break;
    }
    case "reply.restarted": {
      const li = replyItem(p.replyTo);
      if (!current(li, p.attempt)) break;
      li.querySelector(".text").textContent = p.text || "";   // the text it continues from, if any
      li.className = "reply streaming restarted";
      li.querySelector(".state").textContent = "restarted (attempt " + p.attempt + ")";
      break;
    }
    case "reply.completed": {
      const li = replyItem(p.replyTo);
      if (current(li, p.attempt)) endReply(li, "done");
      break;
    }
    case "reply.stopped": {
      const li = replyItem(p.replyTo);
      if (current(li, p.attempt)) endReply(li, "stopped");
      break;
    }
    case "reply.failed": {
      const li = replyItem(p.replyTo);
      if (current(li, p.attempt)) endReply(li, "failed", "failed: " + p.error);
      break;
    }
    case "tool.approval.requested": {
      const thread = replyThreads.get(p.replyTo) || "";
      callThreads.set(p.callId, thread);
      const li = replies.get(p.replyTo);
      if (li && current(li, p.attempt)) endReply(li, "waiting", "waiting for approval");
      if (!$("approval-" + p.callId)) show(approvalItem(p, thread));
      break;
    }
    case "tool.approved":
    case "tool.rejected":
      // the run of this event continues the conversation: its reply belongs to the call's thread
      replyThreads.set(event.index, callThreads.get(p.callId) || "");
      break;
    case "tool.result": {
      const li = $("approval-" + p.callId);
      if (li) {
        li.classList.add(p.rejected ? "rejected" : "approved");
        li.querySelector(".state").textContent = p.rejected ? "rejected" : "approved: " + p.result;
      }
      break;
    }
    case "stop.requested":
      for (const li of replies.values()) {
        if (li.dataset.thread === p.thread && li.classList.contains("streaming")) endReply(li, "stopped");
      }
      break;
  }
  const mine = [...replies.values()].some((li) => li.dataset.thread === me && li.classList.contains("streaming"));
  $("stop").hidden = !mine;
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
  $("summary").textContent = state.messages + " messages · " + state.replies + " replies";
});
chat.on("cleared", (index) => {
  $("messages").replaceChildren();
  messages.clear();
  replies.clear();
  $("stop").hidden = true;
  const li = document.createElement("li");
  li.className = "notice";
  li.textContent = "The room was cleared (marker " + index + ").";
  show(li);
});
chat.on("status", (status, error) => {
  const label = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", closed: "closed" }[status]
    || (error ? error.code : status);
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
$("stop").onclick = () => chat.push([{ type: "stop.requested", payload: { thread: me } }]).catch(() => {});
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
