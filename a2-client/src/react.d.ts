import type { A2Client, Contracts, ContractShape, Reply, Session, SessionOptions, SessionView, StateOf } from "./client.js";

/** The part of React the bindings use (React 18 or later). */
export interface ReactLike {
  useSyncExternalStore<T>(subscribe: (listener: () => void) => () => void, getSnapshot: () => T, getServerSnapshot?: () => T): T;
  useEffect(effect: () => void | (() => void), deps?: readonly unknown[]): void;
  useState<T>(initial: T): [T, (next: T | ((current: T) => T)) => void];
}

export interface A2Hooks {
  /**
   * A view the component opens for itself, opened in an effect and closed in its cleanup; null until it is open
   * and while a change of its arguments opens the next. `options` are compared by value (JSON).
   */
  useView<Cs extends Contracts, K extends keyof Cs & string, R extends keyof StateOf<Cs[K]> & string = never>(
    client: A2Client<Cs>, contract: K, id: string, options?: SessionOptions<R>):
    Session<Cs[K], [R] extends [never] ? unknown : StateOf<Cs[K]>[R]> | null;
  /** The session's view; the component re-renders on every change. */
  useSession<C extends ContractShape, S>(session: Session<C, S>): SessionView<C, S>;
  useSession<C extends ContractShape, S>(session: Session<C, S> | null): SessionView<C, S> | null;
  /**
   * The participants; with `mine`, those fields are written (kept alive) while the component is mounted. `mine`
   * takes what `setPresence` takes: the contract's fields and their values.
   */
  usePresence<C extends ContractShape>(session: Session<C, any>, mine?: Parameters<Session<C, any>["setPresence"]>[0]):
    SessionView<C, any>["presence"];
  usePresence<C extends ContractShape>(session: Session<C, any> | null, mine?: Parameters<Session<C, any>["setPresence"]>[0]):
    SessionView<C, any>["presence"] | null;
  /** The AI replies the session's events draw (`replies(view.events)`); the component re-renders when they change. */
  useReplies(session: Session<any, any>): ReadonlyMap<number, Reply>;
  useReplies(session: Session<any, any> | null): ReadonlyMap<number, Reply> | null;
}

export function bindReact(React: ReactLike): A2Hooks;
