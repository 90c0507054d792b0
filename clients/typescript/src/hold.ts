// Holder: handles that keep Node running only while calls are pending.

/** A handle Node's event loop can be told to wait for or not. */
export interface Refable {
  ref(): unknown;
  unref(): unknown;
}

/**
 * Holder refs its handles (a child process, its pipes, a socket) while a
 * call is pending and unrefs them otherwise, so a client its owner dropped
 * never keeps the process alive, while an awaited call always does.
 */
export class Holder {
  #handles: Refable[] = [];
  #pending = 0;
  #forever = false;

  constructor(handles: object[] = []) {
    this.set(handles);
  }

  /**
   * set replaces the handles held (e.g. a new connection's socket). Those
   * without ref and unref (a child's stdio typed as plain streams is a
   * socket when it is a pipe) are skipped.
   */
  set(handles: object[]): void {
    this.#handles = handles.filter(isRefable);
    this.#apply();
  }

  /** during holds the handles until p settles; it returns p. */
  during<T>(p: Promise<T>): Promise<T> {
    this.#pending++;
    this.#apply();
    const release = () => {
      this.#pending--;
      this.#apply();
    };
    p.then(release, release);
    return p;
  }

  /** forever holds the handles from now on (e.g. while closing). */
  forever(): void {
    this.#forever = true;
    this.#apply();
  }

  /** busy says whether a call is pending. */
  get busy(): boolean {
    return this.#pending > 0;
  }

  #apply(): void {
    const hold = this.#pending > 0 || this.#forever;
    for (const h of this.#handles) {
      if (hold) h.ref();
      else h.unref();
    }
  }
}

function isRefable(h: object): h is Refable {
  const r = h as Partial<Refable>;
  return typeof r.ref === "function" && typeof r.unref === "function";
}
