// The one LISTEN client: a connection on the `quiesce_control` channel, fanned out to every
// subscriber in the process — abort tokens, SSE streams and the barrier engine (docs/architecture.md#integrations-fail-closed: no
// polling interval). LISTEN needs a session of its own, so this is a dedicated pg.Client, not a pool
// connection; it reads nothing but notifications. When the connection drops it reconnects with
// backoff and tells every subscriber to re-check (`resync`), because notifications sent while it was
// down are gone. While it is down, abort tokens still learn of a kill from the gate heartbeat: the
// guards' periodic heartbeat and the resync re-check (docs/deploy.md#what-happens-when-each-one-dies).
import type pg from "pg";
import { CONTROL_CHANNEL, parseControlEvent, type ControlEvent, type ResyncEvent, type WakeEvent } from "../../schemas/control-event";
import { backoffDelay } from "../wait";
import { listenUrl } from "./url";
import { newClient } from "./hosts";

export type WakeHandler = (e: WakeEvent) => void;

/**
 * The second channel on the same connection: a key, membership or user row whose authority changed
 * (revoked, role, disabled, removed). Sent by triggers (lib/platform/db/sql/quiesce_auth_changed.sql),
 * read by the API process's key cache (lib/api/key-cache.ts), which forgets every verified key on it.
 */
export const AUTH_CHANNEL = "quiesce_auth";
/** The subscription key of AUTH_CHANNEL's notices (no run id looks like it). */
export const AUTH_KEY = "#auth";
export type AuthEvent = { kind: "auth" };
/** `"*"` receives every event of every team (the caller filters); otherwise a root run id. */
export type ListenKey = string;

export interface ListenerOptions {
  connectionString?: string;
  /** Liveness probe interval: a half-open TCP connection would otherwise look healthy forever. */
  pingIntervalMs?: number;
  /** Close the connection this long after the last subscriber left (keeps short scripts exiting). */
  idleCloseMs?: number;
  log?: (msg: string) => void;
  /** Name the connection shows in pg_stat_activity. */
  applicationName?: string;
}

export class ControlListener {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private readonly subs = new Map<ListenKey, Set<WakeHandler>>();
  private attempt = 0;
  private everConnected = false;
  private closed = false;
  private pingTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: ListenerOptions = {}) {}

  /** Resolves once LISTEN is active, so no event committed after this returns can be missed. */
  async subscribe(key: ListenKey, handler: WakeHandler): Promise<() => void> {
    if (this.closed) throw new Error("control listener is closed");
    let set = this.subs.get(key);
    if (!set) this.subs.set(key, (set = new Set()));
    set.add(handler);
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    try {
      await this.ready();
    } catch (err) {
      this.remove(key, handler);
      throw err;
    }
    return () => this.remove(key, handler);
  }

  /** Connected and listening; rejects only when the first connection attempt fails. */
  ready(): Promise<void> {
    if (this.client) return Promise.resolve();
    if (!this.connecting)
      this.connecting = this.connect().finally(() => {
        this.connecting = null;
      });
    return this.connecting;
  }

  /** LISTEN is active on a live connection now (a notice sent now will arrive). */
  get listening(): boolean {
    return this.client !== null;
  }

  /** AUTH_CHANNEL's notices, and `resync` after a reconnect (notices may have been lost). */
  subscribeAuth(handler: (e: AuthEvent | ResyncEvent) => void): Promise<() => void> {
    return this.subscribe(AUTH_KEY, handler as WakeHandler);
  }

  get subscriberCount(): number {
    let n = 0;
    for (const s of this.subs.values()) n += s.size;
    return n;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subs.clear();
    this.clearTimers();
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => {});
  }

  private remove(key: ListenKey, handler: WakeHandler): void {
    const set = this.subs.get(key);
    if (!set) return;
    set.delete(handler);
    if (set.size === 0) this.subs.delete(key);
    if (this.subs.size === 0 && this.client && !this.idleTimer) {
      this.idleTimer = setTimeout(() => {
        this.idleTimer = null;
        if (this.subs.size === 0) this.disconnect();
      }, this.opts.idleCloseMs ?? 10_000);
      this.idleTimer.unref();
    }
  }

  private async connect(): Promise<void> {
    // A multi-host string connects to the primary (lib/platform/db/hosts.ts); after a failover the
    // reconnect below finds the new one. A transaction pooler is refused (lib/platform/db/url.ts).
    const client = newClient(this.opts.connectionString ?? listenUrl(), {
      keepAlive: true,
      application_name: this.opts.applicationName ?? "quiesce-control-listener",
    });
    client.on("notification", (msg) => {
      if (msg.channel === AUTH_CHANNEL) {
        for (const h of [...(this.subs.get(AUTH_KEY) ?? [])]) safeCall(h, { kind: "auth" } as unknown as WakeEvent, this.opts.log);
        return;
      }
      if (msg.channel !== CONTROL_CHANNEL || !msg.payload) return;
      const event = parseControlEvent(msg.payload);
      if (event) this.dispatch(event);
    });
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client, new Error("connection ended")));
    await client.connect();
    await client.query(`LISTEN ${CONTROL_CHANNEL}; LISTEN ${AUTH_CHANNEL}`);
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.attempt = 0;
    this.startPing(client);
    if (this.everConnected) this.dispatchAll({ kind: "resync" });
    this.everConnected = true;
  }

  private dispatch(event: ControlEvent): void {
    for (const key of [event.rootRunId, "*"]) {
      const set = this.subs.get(key);
      if (!set) continue;
      for (const h of [...set]) safeCall(h, event, this.opts.log);
    }
  }

  private dispatchAll(event: WakeEvent): void {
    for (const set of this.subs.values()) for (const h of [...set]) safeCall(h, event, this.opts.log);
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.client !== client) return;
    this.client = null;
    this.clearTimers();
    client.end().catch(() => {});
    if (this.closed || this.subs.size === 0) return;
    this.opts.log?.(`[listen] control listener lost (${err.message}); reconnecting`);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const delay = backoffDelay(this.attempt++, { baseMs: 100, capMs: 5000 });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.closed || this.subs.size === 0 || this.client) return;
      this.ready().catch((e: Error) => {
        this.opts.log?.(`[listen] reconnect failed: ${e.message}`);
        this.scheduleReconnect();
      });
    }, delay);
  }

  /**
   * The next ping is armed only once the previous one answered: a timer that fired every interval
   * regardless sent a query on a connection still busy with the last one whenever an answer took
   * longer than the interval (node-postgres deprecates queuing on a busy client: "client.query() when
   * the client is already executing a query").
   */
  private startPing(client: pg.Client): void {
    const every = this.opts.pingIntervalMs ?? 30_000;
    this.pingTimer = setTimeout(() => {
      this.pingTimer = null;
      const timeout = setTimeout(() => client.emit("error", new Error("ping timed out")), 5000);
      client.query("SELECT 1").then(
        () => {
          clearTimeout(timeout);
          if (this.client === client && !this.closed) this.startPing(client);
        },
        (e: Error) => {
          clearTimeout(timeout);
          this.lost(client, e);
        },
      );
    }, every);
    this.pingTimer.unref();
  }

  private disconnect(): void {
    const c = this.client;
    this.client = null;
    this.clearTimers();
    c?.end().catch(() => {});
  }

  private clearTimers(): void {
    if (this.pingTimer) clearTimeout(this.pingTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.pingTimer = this.retryTimer = this.idleTimer = null;
  }
}

function safeCall(h: WakeHandler, e: WakeEvent, log?: (m: string) => void): void {
  try {
    h(e);
  } catch (err) {
    log?.(`[listen] subscriber threw: ${(err as Error).message}`);
  }
}
