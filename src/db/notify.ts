// Wake-ups between the users of one store: "new work was committed" (jobs), "an event was
// recorded" (waiters on the event log). A transaction calls notify(tx, channel, payload); once
// it has committed, every listener of the channel hears the payload: in this process at once,
// and, on PostgreSQL, in every other process on the same database and schema through
// LISTEN/NOTIFY. Nothing is heard of a transaction that rolled back.
//
// note: on PostgreSQL the notification is sent right after the commit, from this process,
// not by a NOTIFY inside the transaction. A transaction that notifies takes a lock at its
// commit that every other notifying transaction of the whole server waits for, until its
// commit is flushed (PreCommit_Notify in PostgreSQL's async.c), so notifying from inside would
// make the commits of all money writes go one at a time. Sent afterwards, notifications of
// the same moment are gathered into one NOTIFY per channel (NOTIFY_GATHER_MS), on the
// listening connection. The price: a process that dies between its commit and the send
// leaves the others unwarned; the job runner therefore still looks at the store now and then
// (JOB_SAFETY_POLL_MS in jobs/runner.ts).
//
// Each process keeps one connection of its own that listens (opened when something first
// listens, re-opened with a growing pause when it drops). Listeners can hear of the gap
// (`onGap`): notifications sent while it was down are lost, so they should look again.

import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { afterCommit } from './endings.js';
import type { Database } from './schema.js';

/** How long notifications wait to be sent together to other processes. */
export const NOTIFY_GATHER_MS = 5;
/** PostgreSQL's bound on a notification's payload is 8000 bytes; ours stay below it. */
const NOTIFY_PAYLOAD_BYTES_MAX = 7000;
/** The first pause before the listening connection is opened again, doubled up to the next. */
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/** How a PostgreSQL store is reached for notifications (set up by db/index.ts). */
export interface PostgresLink {
  /** The database's channel for this store (its schema): see pgChannelOf. */
  channel: string;
  /** A new connection of its own to the database, connected. */
  connect(): Promise<pg.Client>;
  /** Sends a notification from a connection of the store's pool. */
  send(channel: string, payload: string): Promise<void>;
}

export interface Subscription {
  /** Settles once the listening connection listens (or its first try failed); at once on the embedded store. */
  readonly ready: Promise<void>;
  close(): void;
}

interface Listener {
  channel: string;
  onMessage: (payload: string) => void;
  onGap: (() => void) | undefined;
}

/** One store's notifications: its listeners in this process, and its link to the others. */
export class Notifier {
  /** Tells this process's messages apart from the others' on the shared channel. */
  private readonly origin = randomUUID();
  private readonly listeners = new Set<Listener>();
  private readonly outgoing = new Map<string, Set<string>>();
  private gatherTimer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectMs = RECONNECT_FIRST_MS;
  /** The listening connection has been up before: a new one follows a gap. */
  private listenedBefore = false;
  private closed = false;

  constructor(private readonly postgres?: PostgresLink) {}

  /** Listens to `channel` (see Subscription); `onGap` when notifications may have been lost. */
  listen(channel: string, onMessage: (payload: string) => void, onGap?: () => void): Subscription {
    const listener: Listener = { channel, onMessage, onGap };
    this.listeners.add(listener);
    return { ready: this.ensureListening(), close: () => this.listeners.delete(listener) };
  }

  /** Delivers `payload` to this process's listeners, and sends it to the other processes. */
  publish(channel: string, payload: string): void {
    this.deliver(channel, [payload]);
    if (this.postgres === undefined || this.closed) return;
    let payloads = this.outgoing.get(channel);
    if (payloads === undefined) {
      payloads = new Set();
      this.outgoing.set(channel, payloads);
    }
    payloads.add(payload);
    if (this.gatherTimer === undefined && this.sending === undefined) {
      this.gatherTimer = setTimeout(() => void this.send(), NOTIFY_GATHER_MS);
      this.gatherTimer.unref();
    }
  }

  /** Sends what waits to be sent, then stops listening. */
  async close(): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.gatherTimer);
    this.gatherTimer = undefined;
    await this.sending;
    await this.send();
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.listeners.clear();
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private deliver(channel: string, payloads: string[]): void {
    for (const listener of this.listeners) {
      if (listener.channel !== channel) continue;
      for (const payload of payloads) {
        try {
          listener.onMessage(payload);
        } catch {
          // A listener's failure is its own; the others still hear.
        }
      }
    }
  }

  private async send(): Promise<void> {
    this.gatherTimer = undefined;
    if (this.postgres === undefined || this.outgoing.size === 0) return;
    const messages: string[] = [];
    for (const [channel, payloads] of this.outgoing) {
      let message = '';
      for (const payload of payloads) {
        const head = `${this.origin} ${channel}`;
        if (message !== '' && Buffer.byteLength(message) + Buffer.byteLength(payload) + 1 > NOTIFY_PAYLOAD_BYTES_MAX) {
          messages.push(message);
          message = '';
        }
        message = message === '' ? `${head}\n${payload}` : `${message}\n${payload}`;
      }
      if (message !== '') messages.push(message);
    }
    this.outgoing.clear();
    const link = this.postgres;
    this.sending = (async () => {
      for (const message of messages) {
        try {
          // The listening connection sends when it is up: no connection is taken from the
          // pool, which the requests need.
          if (this.client !== undefined) await this.client.query('SELECT pg_notify($1, $2)', [link.channel, message]);
          else await link.send(link.channel, message);
        } catch {
          // Lost: the listeners' own looks (see the top of this file) make up for it.
        }
      }
    })();
    await this.sending;
    this.sending = undefined;
    if (this.outgoing.size > 0 && this.gatherTimer === undefined && !this.closed) {
      this.gatherTimer = setTimeout(() => void this.send(), NOTIFY_GATHER_MS);
      this.gatherTimer.unref();
    }
  }

  private ensureListening(): Promise<void> {
    if (this.postgres === undefined || this.closed || this.client !== undefined) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const link = this.postgres!;
    let client: pg.Client | undefined;
    try {
      client = await link.connect();
      client.on('notification', (message) => this.heard(message.payload));
      const lost = () => this.lost(client!);
      client.on('error', lost);
      client.on('end', lost);
      await client.query(`LISTEN ${quoteName(link.channel)}`);
    } catch {
      await client?.end().catch(() => {});
      this.scheduleReconnect();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.reconnectMs = RECONNECT_FIRST_MS;
    if (this.listenedBefore) for (const listener of [...this.listeners]) listener.onGap?.();
    this.listenedBefore = true;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    // The gap counts from now: what was sent meanwhile is lost.
    this.listenedBefore = true;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer !== undefined || this.listeners.size === 0) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.ensureListening();
    }, this.reconnectMs);
    this.reconnectTimer.unref();
    this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_MAX_MS);
  }

  private heard(message: string | undefined): void {
    if (message === undefined) return;
    const lines = message.split('\n');
    const [origin, channel] = (lines[0] ?? '').split(' ');
    if (origin === this.origin || channel === undefined) return;
    this.deliver(channel, lines.slice(1));
  }
}

/** The channel of a store on PostgreSQL: one per schema (channels are per database). */
export function pgChannelOf(schema: string): string {
  const name = `railyard_${schema}`;
  // A channel name is an identifier: at most 63 bytes.
  return /^[a-z0-9_]+$/.test(schema) && name.length <= 63
    ? name
    : `railyard_${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;
}

function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

// The notifier of each store, keyed by its adapter (a database and its transactions share it).
const NOTIFIERS = new WeakMap<object, Notifier>();

/** Called by db/index.ts for each store it opens. */
export function registerNotifier(k: Kysely<Database>, notifier: Notifier): void {
  NOTIFIERS.set(k.getExecutor().adapter, notifier);
}

/**
 * Once the transaction `q` commits (at once, outside a transaction), every listener of
 * `channel` on the store hears `payload`, in this process and the others. Payloads of one
 * moment may arrive together, and identical ones once.
 */
export function notify(q: Kysely<Database>, channel: string, payload: string): void {
  const notifier = NOTIFIERS.get(q.getExecutor().adapter);
  if (notifier !== undefined) afterCommit(q, () => notifier.publish(channel, payload));
}

/** Listens to `channel` on the store `q` belongs to (see Notifier.listen). */
export function listen(
  q: Kysely<Database>,
  channel: string,
  onMessage: (payload: string) => void,
  onGap?: () => void,
): Subscription {
  const notifier = NOTIFIERS.get(q.getExecutor().adapter);
  if (notifier === undefined) return { ready: Promise.resolve(), close() {} };
  return notifier.listen(channel, onMessage, onGap);
}
