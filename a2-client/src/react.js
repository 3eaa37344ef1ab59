// React bindings of A2's client on useSyncExternalStore: no JSX, no build step, and React is not a
// dependency: pass the page's React (`bindReact(React)`), however the page loaded it.
import { replies } from "./client.js";

/**
 * The fields of each session that a `usePresence` cleanup removes, and the values it wrote (as JSON): removed
 * a microtask later, unless an effect that runs at once takes them over. React runs a cleanup and the next
 * effect in one go when the fields change, on StrictMode's second mount and on a hot update; removing them
 * in the cleanup wrote every change twice (the removal, then the value) and showed a flicker to others.
 */
const leaving = new WeakMap();

/** The store of no session (a view not open yet): nothing to subscribe to, nothing to read. */
const noStore = () => () => {};
const nothing = () => null;

/**
 * The hooks bound to a React: `useView(client, contract, id, options?)` opens a view for the component
 * while it is mounted; `useSession(session)` answers the session's view (events, presence, state,
 * status, error) and re-renders on every change; `usePresence(session, mine?)` answers the
 * participants and, with `mine`, writes those fields (kept alive) while the component is mounted;
 * `useReplies(session)` answers the AI replies its events draw (`replies(view.events)`). All but
 * `useView` take null (a view not open yet) and answer null.
 */
export function bindReact(React) {
  if (!React || typeof React.useSyncExternalStore !== "function") {
    throw new TypeError("bindReact needs React 18 or later (useSyncExternalStore)");
  }

  /**
   * A view the component opens for itself: opened in an effect and closed in its cleanup, never in render
   * (StrictMode and a hot update run effects twice: a view opened in render or useMemo is closed by the
   * first cleanup, and another is left open). Null until it is open, and again while a change of its
   * arguments opens the next; the other hooks take null. `options` are compared by value (JSON).
   */
  function useView(client, contract, id, options) {
    const key = JSON.stringify(options ?? {});
    const [session, setSession] = React.useState(null);
    React.useEffect(() => {
      const opened = client.session(contract, id, JSON.parse(key));
      setSession(opened);
      return () => {
        opened.close();
        setSession((current) => (current === opened ? null : current));
      };
    }, [client, contract, id, key]);
    return session;
  }

  function useSession(session) {
    return React.useSyncExternalStore(session ? session.subscribe : noStore, session ? session.getSnapshot : nothing,
      session ? session.getSnapshot : nothing);
  }

  function usePresence(session, mine) {
    const read = () => (session ? session.getSnapshot().presence : null);
    const presence = React.useSyncExternalStore(session ? session.subscribe : noStore, read, read);
    const key = mine && session ? JSON.stringify(mine) : null;
    React.useEffect(() => {
      if (!key) return undefined;
      const values = JSON.parse(key);
      // what an effect just cleaned up is still written: an unchanged field is not written again, a changed one
      // once, and neither is removed first (other pages would see it vanish and come back)
      const left = leaving.get(session);
      const changed = {};
      for (const [field, value] of Object.entries(values)) {
        const unchanged = left !== undefined && left.get(field) === JSON.stringify(value);
        if (left) left.delete(field);
        if (!unchanged) changed[field] = value;
      }
      if (Object.keys(changed).length > 0) session.setPresence(changed).catch(() => {});
      return () => {
        if (session.closed) return;   // its goodbye removed them
        let fields = leaving.get(session);
        if (!fields) {
          leaving.set(session, fields = new Map());
          queueMicrotask(() => {
            leaving.delete(session);
            if (fields.size === 0 || session.closed) return;
            session.setPresence(Object.fromEntries([...fields.keys()].map((field) => [field, null]))).catch(() => {});
          });
        }
        for (const [field, value] of Object.entries(values)) if (value !== null) fields.set(field, JSON.stringify(value));
      };
    }, [session, key]);
    return presence;
  }

  /** The replies, re-rendering when the events change: `replies` answers the same Map while they do not. */
  function useReplies(session) {
    const snapshot = () => (session ? replies(session.getSnapshot().events) : null);
    return React.useSyncExternalStore(session ? session.subscribe : noStore, snapshot, snapshot);
  }

  return { useView, useSession, usePresence, useReplies };
}
