import { test } from "node:test";
import assert from "node:assert/strict";
import { bindReact } from "../src/react.js";
import { client, message, NO_SERVER, sent, sessionId, until } from "./support.mjs";

/**
 * The part of React the bindings use, as React runs it: useSyncExternalStore subscribes, reads the
 * snapshot twice per render and throws when two reads of an unchanged store differ (React's
 * "getSnapshot should be cached" error, which loops a real page).
 */
function fakeReact() {
  const effects = [];
  const renders = [];
  const states = [];
  const React = {
    useState(initial) {
      const cell = { value: initial };
      states.push(cell);
      return [cell.value, (next) => { cell.value = typeof next === "function" ? next(cell.value) : next; }];
    },
    useSyncExternalStore(subscribe, getSnapshot) {
      const first = getSnapshot();
      if (first !== getSnapshot()) throw new Error("The result of getSnapshot should be cached to avoid an infinite loop");
      if (!React.subscribed) React.subscribed = subscribe(() => renders.push(getSnapshot()));
      return first;
    },
    useEffect(effect) {
      effects.push(effect());
    },
  };
  return { React, effects, renders, states };
}

test("useSession answers the view and re-renders on every change", { skip: NO_SERVER }, async (t) => {
  const { React, renders } = fakeReact();
  const { useSession } = bindReact(React);
  const room = client(t).session("chat", sessionId("react"));
  const first = useSession(room);
  assert.equal(first.status, "connecting");
  await room.push([message("hooked")]);
  await until(room, (v) => sent(v).length === 1 && !v.pending.length);
  assert.ok(renders.some((view) => view.pending.length === 1), "rendered the pending message");
  assert.equal(sent(renders[renders.length - 1])[0].payload.text, "hooked");
});

test("useView opens a view for the component while it is mounted and closes it when unmounted", { skip: NO_SERVER }, async (t) => {
  const { React, effects, states } = fakeReact();
  const { useView, useSession, usePresence } = bindReact(React);
  const a2 = client(t);
  assert.equal(useView(a2, "chat", sessionId("react-view"), { state: "summary" }), null, "not open at the first render");
  assert.equal(useSession(null), null, "the hooks take a view not open yet");
  assert.equal(usePresence(null, { online: true }), null);
  const opened = states[0].value;   // what the effect opened, the next render's
  assert.ok(opened && !opened.closed);
  await until(opened, (v) => v.status === "live" && v.state !== null, "the view live with its state");
  effects[0]();   // unmounted
  assert.equal(opened.closed, true, "closed by the cleanup");
  assert.equal(states[0].value, null);
});

test("usePresence writes the component's fields while mounted and removes them when unmounted", { skip: NO_SERVER }, async (t) => {
  const { React, effects } = fakeReact();
  const { usePresence } = bindReact(React);
  const id = sessionId("react-presence");
  const watcher = client(t, { participant: "watcher" }).session("chat", id);
  const page = client(t, { participant: "carol" }).session("chat", id);
  usePresence(page, { online: true });
  await until(watcher, (v) => v.presence.carol && v.presence.carol.online);
  effects[0]();   // unmounted
  await until(watcher, (v) => !v.presence.carol);
});

test("useReplies answers the replies the session's events draw, the same Map until they change", { skip: NO_SERVER }, async (t) => {
  const { React, renders } = fakeReact();   // throws, as React does, when two reads of an unchanged store differ
  const { useReplies } = bindReact(React);
  const room = client(t).session("chat", sessionId("react-replies"));
  assert.equal(useReplies(room).size, 0);
  const [{ index }] = await room.push([message("@assistant hello", "ann")]);
  await until(room, (v) => v.events.some((e) => e.type === "reply.completed"), "the reply to end");
  const last = renders[renders.length - 1];
  assert.equal(last.get(index).status, "completed");
  assert.ok(last.get(index).text.startsWith("Hello ann."), last.get(index).text);
  assert.ok(renders.some((drawn) => drawn.get(index)?.status === "streaming"), "rendered the reply as it streamed");
});

test("bindReact refuses a React without useSyncExternalStore", () => {
  assert.throws(() => bindReact({}), /React 18/);
});

/**
 * A component as React runs its effects: `render(values)` runs the hook, then, when its dependencies
 * changed, the last cleanup and the new effect in one go; `strict` mounts as StrictMode does in
 * development (effect, cleanup, effect); `unmount()` runs the last cleanup.
 */
function component(session, strict = false) {
  let deps = null;
  let effect = null;
  let cleanup = null;
  const React = {
    useSyncExternalStore: (subscribe, getSnapshot) => getSnapshot(),
    useEffect(run, next) {
      if (deps && next.every((d, i) => Object.is(d, deps[i]))) return;
      deps = next;
      effect = run;
    },
  };
  const hooks = bindReact(React);
  return {
    render(values) {
      effect = null;
      hooks.usePresence(session, values);
      if (!effect) return;
      const mounting = cleanup === null;
      if (cleanup) cleanup();
      cleanup = effect() ?? (() => {});
      if (strict && mounting) {
        cleanup();
        cleanup = effect() ?? (() => {});
      }
    },
    unmount() {
      if (cleanup) cleanup();
    },
  };
}

test("usePresence writes only what changed, never removing a field it writes again, also on StrictMode's second mount",
  { skip: NO_SERVER }, async (t) => {
    const id = sessionId("react-presence-changes");
    const writes = [];
    const watcher = client(t, { participant: "watcher" }).session("chat", id);
    const page = client(t, {
      participant: "dave",
      fetch: (url, init) => {
        if (init.method === "PUT") writes.push(JSON.parse(init.body).values);
        return fetch(url, init);
      },
    }).session("chat", id);
    const mounted = component(page, true);
    mounted.render({ online: true });
    await until(watcher, (v) => v.presence.dave && v.presence.dave.online, "dave online");
    mounted.render({ online: true, typing: true });
    await until(watcher, (v) => v.presence.dave && v.presence.dave.typing, "dave typing");
    assert.deepEqual(writes, [{ online: true }, { typing: true }], "one write per change, no removal between");
    mounted.unmount();
    await until(watcher, (v) => !v.presence.dave, "dave's fields removed once unmounted");
    assert.deepEqual(writes.slice(2), [{ online: null, typing: null }]);
  });
