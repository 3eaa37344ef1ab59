// React bindings of A2's client on useSyncExternalStore: no JSX, no build step, and React is not a
// dependency: pass the page's React (`bindReact(React)`), however the page loaded it.

/**
 * The hooks bound to a React: `useSession(session)` answers the session's view (events, presence,
 * state, status, error) and re-renders on every change; `usePresence(session, mine?)` answers the
 * participants and, with `mine`, writes those fields (kept alive) while the component is mounted.
 */
export function bindReact(React) {
  if (!React || typeof React.useSyncExternalStore !== "function") {
    throw new TypeError("bindReact needs React 18 or later (useSyncExternalStore)");
  }

  function useSession(session) {
    return React.useSyncExternalStore(session.subscribe, session.getSnapshot, session.getSnapshot);
  }

  function usePresence(session, mine) {
    const presence = React.useSyncExternalStore(session.subscribe, () => session.getSnapshot().presence,
      () => session.getSnapshot().presence);
    const key = mine ? JSON.stringify(mine) : null;
    React.useEffect(() => {
      if (!key) return undefined;
      const values = JSON.parse(key);
      session.setPresence(values).catch(() => {});
      return () => {
        if (session.closed) return;
        session.setPresence(Object.fromEntries(Object.keys(values).map((field) => [field, null]))).catch(() => {});
      };
    }, [session, key]);
    return presence;
  }

  return { useSession, usePresence };
}
