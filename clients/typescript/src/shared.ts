// CkptSharedClient: a client of the store's resident server, shared with
// every other client of the store.

import type { Socket } from "node:net";
import { findBinary } from "./binary.js";
import { CkptCalls } from "./calls.js";
import { CkptConnectionError } from "./errors.js";
import { Holder } from "./hold.js";
import { RpcConnection, type CallOptions } from "./rpc.js";
import type { NameBase64 } from "./types.js";
import { dial, endpointOf, startServer, workspaceParams, type Listening, type Workspace } from "./server.js";

/** How to reach the store's server, and how to start it when none runs. */
export interface ConnectOptions {
  /** The workspace directory, or the roots of a multi-root workspace. */
  workspace: Workspace;
  /** The store directory; default: ckpt's own choice for the workspace. */
  store?: string;
  /** The default task of calls that name none. */
  task?: string;
  /** The exclusion profile this client's calls capture with (default: the server's; ckpt's `default` for one this client starts). */
  profile?: string;
  /** The ckpt executable; see findBinary for the search when absent. */
  binary?: string;
  /** How long a server this client starts stays up without clients (a Go duration, default "5m"). */
  serverIdle?: string;
  /** Extra arguments for a server this client starts. */
  serverArgs?: string[];
  /** The environment of a server this client starts; default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** How long the connection stays open after the last call (ms, default 1000). */
  lingerMs?: number;
}

/** What the server answers `attach` with. */
export interface AttachResult {
  workspace: string;
  /** The workspace directory's bytes, when its name is not valid UTF-8. */
  workspace_base64?: NameBase64;
  /** A multi-root workspace's roots; workspace is then their identity. */
  roots?: { name: string; dir: string }[];
  store: string;
  /** The store directory's bytes, when its name is not valid UTF-8. */
  store_base64?: NameBase64;
  profile: string;
  pid: number;
}

/** The endpoint found for each workspace without an explicit store, so that reconnecting costs no process. */
const endpoints = new Map<string, string>();

/** endpointKey is a workspace's key in endpoints: its directory, or its roots in order. */
function endpointKey(w: Workspace): string {
  return typeof w === "string" ? w : JSON.stringify(w);
}

interface Link {
  socket: Socket;
  rpc: RpcConnection;
  attached: Promise<AttachResult>;
}

/**
 * CkptSharedClient calls the store's resident server (`ckpt serve
 * --listen`) over its socket or named pipe, so any number of clients, CLI
 * commands, `ckpt ui` and MCP servers use one engine at once. It connects
 * on the first call, starting the server detached when none answers (see
 * startServer), and attaches: the server checks the workspace is its own,
 * serves the client's calls under the client's profile (its own when none
 * is given) and takes the client's default task. The connection closes
 * lingerMs after the last call and opens again on the next, so a client
 * that is dropped without close() leaks nothing; it never keeps Node
 * running while no call is pending. Notifications of the client's tasks
 * (its default task and those it saved or restored) arrive while it is
 * connected and are emitted as CkptCalls says. A connection lost mid-call
 * rejects that call with a CkptConnectionError; the next call reconnects.
 */
export class CkptSharedClient extends CkptCalls {
  readonly #opts: ConnectOptions;
  readonly #hold = new Holder();
  #link: Promise<Link> | undefined;
  #live: Link | undefined; // #link once connected, until the connection is lost
  #linger: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(opts: ConnectOptions) {
    super();
    this.#opts = opts;
  }

  /** connect makes a client of the store's server; it connects on the first call. */
  static connect(opts: ConnectOptions): CkptSharedClient {
    return new CkptSharedClient(opts);
  }

  /** attach connects now and resolves with what the server said about itself. */
  async attach(): Promise<AttachResult> {
    return this.#hold.during(this.#connected().then((l) => l.attached));
  }

  call<R>(method: string, params?: object, opts?: CallOptions): Promise<R> {
    if (this.#closed) return Promise.reject(closedError());
    clearTimeout(this.#linger);
    const done = this.#hold.during(this.#connected().then(async (l) => {
      await l.attached;
      return l.rpc.call<R>(method, params, opts);
    }));
    const idle = () => this.#lingerThenDrop();
    done.then(idle, idle);
    return done;
  }

  /** close rejects pending calls and closes the connection; the server stays for its other clients. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#linger);
    const link = this.#link;
    this.#link = undefined;
    this.#live = undefined;
    const l = await link?.catch(() => undefined);
    l?.rpc.fail(closedError());
    l?.socket.end();
  }

  #connected(): Promise<Link> {
    if (!this.#link) {
      const link = this.#open();
      this.#link = link;
      link.catch(() => {
        if (this.#link === link) this.#link = undefined; // the next call tries again
      });
    }
    return this.#link;
  }

  /**
   * open connects and attaches. A server can go away between saying where
   * it listens and answering attach (it reached its idle timeout as this
   * client came, or it lost a race to start): then nothing was asked of it
   * yet, so this client dials, or starts a server, again, a few times.
   */
  async #open(): Promise<Link> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#openOnce();
      } catch (e) {
        if (!(e instanceof ServerWentAway) || attempt === openAttempts) {
          throw e instanceof ServerWentAway ? e.error : e;
        }
      }
    }
  }

  /** openOnce dials or starts the server and attaches; ServerWentAway when the server went before attach's answer. */
  async #openOnce(): Promise<Link> {
    const socket = await this.#dialOrStart();
    let attachedYet = false;
    const lost = (message: string) => {
      const err = new CkptConnectionError(message, { code: null, signal: null, stderr: "" });
      link.rpc.fail(attachedYet ? err : new ServerWentAway(err));
      if (this.#live === link) {
        this.#live = undefined;
        this.#link = undefined;
      }
      socket.destroy(); // a connection the peer broke is not used again
    };
    const rpc = new RpcConnection(socket, socket, (n) => this.notify(n), (reason) => lost(reason.message), "the store's server");
    socket.on("close", () => lost("the store's server closed the connection"));
    socket.on("error", () => {}); // "close" follows and reports it
    this.#hold.set([socket]);
    const o = this.#opts;
    const params: Record<string, unknown> = { ...workspaceParams(o.workspace) };
    if (o.task !== undefined) params.task = o.task;
    if (o.profile !== undefined) params.profile = o.profile;
    const link: Link = { socket, rpc, attached: rpc.call<AttachResult>("attach", params) };
    try {
      await link.attached;
    } catch (e) {
      socket.end(); // refused or gone: the next call tries again
      throw e;
    }
    attachedYet = true;
    this.#live = link;
    return link;
  }

  /** dialOrStart connects to the store's server, starting it if none answers. */
  async #dialOrStart(): Promise<Socket> {
    const o = this.#opts;
    const known = o.store !== undefined ? await endpointOf(o.store).catch(() => undefined) : endpoints.get(endpointKey(o.workspace));
    if (known !== undefined) {
      const socket = await dial(known).catch(() => undefined);
      if (socket) return socket;
    }
    const start = { binary: findBinary(o.binary === undefined ? {} : { binary: o.binary }), workspace: o.workspace,
      idle: o.serverIdle ?? "5m" };
    const l: Listening = await startServer({
      ...start,
      ...(o.store !== undefined && { store: o.store }),
      ...(o.profile !== undefined && { profile: o.profile }),
      ...(o.serverArgs !== undefined && { args: o.serverArgs }),
      ...(o.env !== undefined && { env: o.env }),
    });
    if (o.store === undefined) endpoints.set(endpointKey(o.workspace), l.listening);
    return dial(l.listening).catch((e: Error) => {
      throw new ServerWentAway(new CkptConnectionError(`the store's server at ${l.listening} went away: ${e.message}`,
        { code: null, signal: null, stderr: "" }));
    });
  }

  /** lingerThenDrop closes an idle connection after lingerMs; the timer never keeps Node running. */
  #lingerThenDrop(): void {
    if (this.#hold.busy || this.#closed) return;
    clearTimeout(this.#linger);
    this.#linger = setTimeout(() => {
      const link = this.#live;
      if (this.#hold.busy || !link) return;
      this.#live = undefined;
      this.#link = undefined;
      link.socket.end();
    }, this.#opts.lingerMs ?? 1000);
    this.#linger.unref();
  }
}

/** How many times a client dials or starts the store's server before a server that keeps going away fails its call. */
const openAttempts = 5;

/** ServerWentAway carries the error of a server that went before it answered attach: opening again may succeed. */
class ServerWentAway extends Error {
  constructor(readonly error: CkptConnectionError) {
    super(error.message);
  }
}

function closedError(): CkptConnectionError {
  return new CkptConnectionError("the client was closed", { code: null, signal: null, stderr: "" });
}
