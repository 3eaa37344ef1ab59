import type { ContractShape, Reply, Session, SessionView } from "./client.js";

/** The part of React the bindings use (React 18 or later). */
export interface ReactLike {
  useSyncExternalStore<T>(subscribe: (listener: () => void) => () => void, getSnapshot: () => T, getServerSnapshot?: () => T): T;
  useEffect(effect: () => void | (() => void), deps?: readonly unknown[]): void;
}

export interface A2Hooks {
  /** The session's view; the component re-renders on every change. */
  useSession<C extends ContractShape, S>(session: Session<C, S>): SessionView<C, S>;
  /**
   * The participants; with `mine`, those fields are written (kept alive) while the component is mounted. `mine`
   * takes what `setPresence` takes: the contract's fields and their values.
   */
  usePresence<C extends ContractShape>(session: Session<C, any>, mine?: Parameters<Session<C, any>["setPresence"]>[0]):
    SessionView<C, any>["presence"];
  /** The AI replies the session's events draw (`replies(view.events)`); the component re-renders when they change. */
  useReplies(session: Session<any, any>): ReadonlyMap<number, Reply>;
}

export function bindReact(React: ReactLike): A2Hooks;
