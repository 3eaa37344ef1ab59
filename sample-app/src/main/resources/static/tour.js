"use strict";
// The tour's chat page: it pushes and reads the room through A2's router (/a2/chat/...) and shows
// the stream as it comes. Everything it draws is text, never markup: messages come from users.

const params = new URLSearchParams(location.search);
const room = params.get("room") || "lobby";
const me = params.get("name") || localStorage.getItem("a2-tour-name") || "guest-" + Math.random().toString(36).slice(2, 6);
localStorage.setItem("a2-tour-name", me);
const roomPath = "/a2/chat/sessions/" + encodeURIComponent(room);
const $ = (id) => document.getElementById(id);

let lastIndex = 0;                 // the stream's position: events at or before it are shown already
const replies = new Map();         // replyTo index -> the reply's element
const people = new Map();          // participant -> {online, typing}

function newId() {
  return (crypto.randomUUID) ? crypto.randomUUID()
    : Date.now().toString(36) + "-" + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
}

async function call(method, path, body) {
  const options = { method, headers: { "Accept": "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const answer = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) throw new Error(answer && answer.error ? answer.error.code + ": " + answer.error.message : response.statusText);
  return answer;
}

// A push carries its events' ids, so sending it again after a lost answer stores nothing twice.
async function push(events, presence) {
  const body = { events: events.map((e) => Object.assign({ id: newId() }, e)) };
  if (presence) body.presence = { participant: me, values: presence };
  try {
    return await call("POST", roomPath + "/events", body);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;   // a network error: the same push again is safe
    return call("POST", roomPath + "/events", body);
  }
}

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

function apply(event) {
  const p = event.payload;
  switch (event.type) {
    case "message.sent": {
      const li = item("message" + (p.author === me ? " mine" : ""), p.author, p.text);
      li.dataset.index = event.index;
      li.id = "message-" + event.index;
      replyThreads.set(event.index, p.thread);
      show(li);
      break;
    }
    case "stop.requested":
      for (const li of replies.values()) {
        if (li.dataset.thread === p.thread && li.classList.contains("streaming")) li.classList.replace("streaming", "stopped");
      }
      break;
    case "message.delivered": {
      const li = $("message-" + p.index);
      if (li) li.classList.add("delivered");
      break;
    }
    default:
      applyAi(event);
  }
}

// ---- The assistant's events (a2-spring-ai: reply.*, tool.*), kept together so they can move as one ----
// A reply is keyed by replyTo (the index of the event its run answers). Each event names the attempt
// of the run that wrote it: reply.restarted drops the partial text of the attempt it replaces, and
// text of an older attempt (a stalled instance waking up) is not the reply any more.
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
  const decide = (type, payload) => () => push([{ type, payload }]).catch((err) => alert(err.message));
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

function applyAi(event) {
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
      li.querySelector(".text").textContent = "";
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
  }
}

function refreshStop() {
  const mine = [...replies.values()].some((li) => li.dataset.thread === me && li.classList.contains("streaming"));
  $("stop").hidden = !mine;
}

function renderPeople() {
  const list = $("people");
  list.replaceChildren();
  const typing = [];
  for (const [name, fields] of [...people.entries()].sort()) {
    if (!fields.online && !fields.typing) continue;
    const li = document.createElement("li");
    li.textContent = name + (name === me ? " (you)" : "");
    li.dataset.participant = name;
    if (fields.typing) li.classList.add("typing-now");
    list.append(li);
    if (fields.typing && name !== me) typing.push(name);
  }
  $("typing").textContent = typing.length === 0 ? ""
    : typing.join(", ") + (typing.length === 1 ? " is typing…" : " are typing…");
}

function connect() {
  // history first, then live; when the connection drops, the browser reconnects by itself with
  // Last-Event-ID, and the server resumes exactly after it
  const stream = new EventSource(roomPath + "/stream?after=0&state=summary");
  stream.onopen = () => { $("connection").textContent = "live"; $("connection").className = "connection live"; };
  stream.onerror = () => { $("connection").textContent = "reconnecting…"; $("connection").className = "connection"; };
  stream.addEventListener("events", (message) => {
    for (const event of JSON.parse(message.data).events) {
      if (event.index <= lastIndex) continue;
      lastIndex = event.index;
      apply(event);
    }
    refreshStop();
  });
  stream.addEventListener("state", (message) => {
    const { state } = JSON.parse(message.data);
    $("summary").textContent = state.messages + " messages · " + state.replies + " replies";
  });
  stream.addEventListener("presence", (message) => {
    const data = JSON.parse(message.data);
    if (data.snapshot) {
      people.clear();
      for (const [name, fields] of Object.entries(data.snapshot.participants)) {
        people.set(name, { online: fields.online ? fields.online.value : null, typing: fields.typing ? fields.typing.value : null });
      }
    }
    for (const patch of data.patches || []) {
      const fields = people.get(patch.participant) || {};
      fields[patch.field] = patch.value;
      people.set(patch.participant, fields);
    }
    renderPeople();
  });
  stream.addEventListener("cleared", (message) => {
    $("messages").replaceChildren();
    replies.clear();
    const li = document.createElement("li");
    li.className = "notice";
    li.textContent = "The room was cleared (marker " + JSON.parse(message.data).index + ").";
    show(li);
    refreshStop();
  });
}

// presence: online while the page is open (refreshed before the TTL runs out), typing while typing
let typingSince = 0;
let typingTimer = null;
function setTyping(typing) {
  if (typing === (typingSince > 0)) return;
  typingSince = typing ? Date.now() : 0;
  call("PUT", roomPath + "/presence", { participant: me, values: { typing } }).catch(() => {});
}
$("text").addEventListener("input", () => {
  setTyping($("text").value.length > 0);
  clearTimeout(typingTimer);
  typingTimer = setTimeout(() => setTyping(false), 3000);
});
function online() {
  call("PUT", roomPath + "/presence", { participant: me, values: { online: true } }).catch(() => {});
}
window.addEventListener("pagehide", () => {
  fetch(roomPath + "/presence", { method: "PUT", keepalive: true, headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ participant: me, values: { online: null, typing: null } }) });
});

$("composer").onsubmit = async (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("text").value = "";
  clearTimeout(typingTimer);
  typingSince = 0;
  try {
    // the message and "no longer typing" land in one transaction
    await push([{ type: "message.sent", payload: { text, author: me, thread: me } }], { typing: false });
  } catch (err) {
    $("text").value = text;
    alert(err.message);
  }
};
$("stop").onclick = () => push([{ type: "stop.requested", payload: { thread: me } }]).catch((err) => alert(err.message));
$("count").onclick = async () => {
  const answer = await call("GET", "/rooms/" + encodeURIComponent(room) + "/words");
  $("words").textContent = answer.words + " words (through event " + answer.through + ")";
};
$("refuse").onsubmit = async (e) => {
  e.preventDefault();
  const answer = await call("PUT", "/demo/refused-word", { word: $("refused").value });
  $("refused").value = answer.word;
};
$("clear").onclick = () => call("DELETE", roomPath).catch((err) => alert(err.message));
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
connect();
online();
setInterval(online, 10000);
