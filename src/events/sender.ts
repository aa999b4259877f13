// One HTTP POST to a webhook receiver, outside any transaction. The POSTs themselves are made
// on a thread of their own (send-worker.js): there, a send that follows another of the same
// resource goes out as soon as the first has its answer, instead of waiting for a turn of this
// thread's event loop, which under load takes milliseconds. Connections are kept alive between
// deliveries; the whole exchange (connect, send, full answer) has one deadline.

import { Worker } from 'node:worker_threads';

export interface HttpAnswer {
  status: number;
  /** The answer's body as text (the first 64 KiB of it at most: send-worker.js). */
  body: string;
}

export interface PostResult {
  answer?: HttpAnswer;
  /** Why no answer came: timeout or connection error. */
  error?: string;
  latencyMs: number;
}

interface WorkerAnswer {
  id: number;
  status?: number;
  body?: string;
  error?: string;
  latencyMs: number;
}

/** A compaction of the sender thread's heap: its size (V8's total) before and after, in bytes. */
export interface HeapCompaction {
  before: number;
  after: number;
}

interface SenderThread {
  worker: Worker;
  waiting: Map<number, (result: PostResult) => void>;
  /** Compactions asked for and not yet done, in the order asked. */
  compactions: ((done: HeapCompaction | undefined) => void)[];
  /** Sends not yet handed to the thread: they go together, once this turn's work is done. */
  outbox: unknown[];
}

/** The sender thread's young generation (V8's nursery), in MB. */
const SENDER_YOUNG_GENERATION_MB = 8;

let thread: SenderThread | undefined;
let nextId = 0;

function senderThread(): SenderThread {
  if (thread !== undefined) return thread;
  // The worker's file sits beside this module: src/events/ in tests, dist/ in the bundle.
  // Its young generation is capped: left to grow, V8 sized it to about 32 MB under a
  // saturating webhook load, for a thread whose live data is a few MB (about 28 MB of the
  // server's memory, which V8 does not give back while deliveries go on).
  const worker = new Worker(new URL('./send-worker.js', import.meta.url), {
    resourceLimits: { maxYoungGenerationSizeMb: SENDER_YOUNG_GENERATION_MB },
  });
  const current: SenderThread = { worker, waiting: new Map(), compactions: [], outbox: [] };
  // Only the sends waiting on it keep the process alive.
  worker.unref();
  // The answers come in batches too (one message per turn of the thread's loop).
  worker.on('message', (answers: WorkerAnswer[] | { compacted: HeapCompaction }) => {
    if (!Array.isArray(answers)) {
      current.compactions.shift()?.(answers.compacted);
      return;
    }
    for (const answer of answers) {
      const resolve = current.waiting.get(answer.id);
      if (resolve === undefined) continue;
      current.waiting.delete(answer.id);
      resolve(
        answer.status === undefined
          ? { error: answer.error ?? 'no answer', latencyMs: answer.latencyMs }
          : { answer: { status: answer.status, body: answer.body ?? '' }, latencyMs: answer.latencyMs },
      );
    }
    if (current.waiting.size === 0) worker.unref();
  });
  const lost = (reason: string) => {
    // The thread is gone: the sends it held have no answer (they are retried like any
    // failure), and the next send starts a new thread.
    if (thread === current) thread = undefined;
    for (const resolve of current.waiting.values()) resolve({ error: reason, latencyMs: 0 });
    current.waiting.clear();
    for (const resolve of current.compactions.splice(0)) resolve(undefined);
  };
  worker.on('error', (err) => lost(`the webhook sender stopped: ${err.message}`));
  worker.on('exit', (code) => lost(`the webhook sender exited (${code})`));
  thread = current;
  return current;
}

export interface PostOptions {
  timeoutMs: number;
  /** Sends given the same key go out one after another, in the order of the calls. */
  orderKey?: string;
  /** A header to carry the body's signature (signing.js), made on the sender's thread. */
  signature?: { header: string; privateKeyPem: string };
}

/**
 * POSTs `body` to `url`; never rejects. Sends given the same `orderKey` go out one after
 * another in the order of the calls, each once the one before has its whole answer.
 */
export function post(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  { timeoutMs, orderKey, signature }: PostOptions,
): Promise<PostResult> {
  const current = senderThread();
  const id = nextId++;
  return new Promise((resolve) => {
    if (current.waiting.size === 0) current.worker.ref();
    current.waiting.set(id, resolve);
    // One message per turn of this loop, not one per send: under load a commit hands over
    // dozens of deliveries at once, and each message costs both threads a wake-up.
    if (current.outbox.push({ id, url, body, headers, timeoutMs, orderKey, signature }) === 1)
      setImmediate(() => current.worker.postMessage(current.outbox.splice(0)));
  });
}

/**
 * Asks the sender's thread, if one runs, for a compacting collection of its heap: after a burst
 * of sends it holds its garbage like the main thread (about 18 MB after the bench's webhook
 * part, with 8 MB live). The main thread's idle collection (main.ts) asks for it. Resolves with
 * the sizes before and after, or undefined when no thread runs.
 */
export function compactSenderHeap(): Promise<HeapCompaction | undefined> {
  const current = thread;
  if (current === undefined) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    current.compactions.push(resolve);
    current.worker.postMessage('compact');
  });
}
