// The platform's fault rules (POST /_railyard/faults and /_railyard/webhook-faults): the rules
// in force with how often each fired, a form to add one, and buttons to remove them. A section
// of the Testing page.

import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ADMIN, ApiError, get, id, type Obj, post, request } from '../api.js';
import { Live, Problem, Table, Time, usePoll } from '../ui.js';

const EFFECTS = [
  ['status', 'Answer with a status'],
  ['latencyMs', 'Delay the answer'],
  ['reset', 'Reset the connection (before the operation)'],
  ['lostResponse', 'Lose the answer (after the operation)'],
] as const;
type Effect = (typeof EFFECTS)[number][0];

const STATUSES = ['429', '500', '502', '503', '504'];
const METHODS = ['', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const WEBHOOK_EFFECTS = ['duplicate', 'delay', 'outOfOrder', 'drop'] as const;

/** A 400's field errors, one per line, after its message. */
function failureOf(err: unknown): Error {
  if (!(err instanceof ApiError) || !Array.isArray((err.details as Obj | undefined)?.errors)) return err as Error;
  const fields = ((err.details as Obj).errors as Obj[]).map((e) => `${e.field} ${e.message}`).join('; ');
  return new ApiError(err.status, err.code, fields, err.details);
}

/** What a request rule matches, in words. */
function matcher(rule: Obj): string {
  const parts = [
    rule.operationId,
    rule.method !== undefined || rule.path !== undefined ? `${rule.method ?? 'any method'} ${rule.path ?? ''}` : '',
    rule.header !== undefined ? `${rule.header.name}: ${rule.header.value}` : '',
  ].filter((part) => part);
  return parts.length === 0 ? 'every request' : parts.join(', ');
}

function effectText(rule: Obj): string {
  if (rule.status !== undefined)
    return `status ${rule.status}${rule.retryAfterSeconds !== undefined ? ` (Retry-After ${rule.retryAfterSeconds} s)` : ''}`;
  if (rule.latencyMs !== undefined) return `latency ${rule.latencyMs} ms`;
  if (rule.reset) return 'reset';
  return `lost response${rule.lostResponseStatus !== undefined ? ` (then ${rule.lostResponseStatus})` : ''}`;
}

function howOften(rule: Obj): string {
  const times = rule.times !== undefined ? `${rule.times} time${rule.times === 1 ? '' : 's'}` : 'every time';
  return rule.probability !== undefined ? `${times}, p = ${rule.probability} (seed ${rule.seed})` : times;
}

/** Parses the number in a form field: undefined when empty. */
function numberOf(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

function useAction(reload: () => void) {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<Error | undefined>(undefined);
  const run = async (action: () => Promise<string>) => {
    setBusy(true);
    setMessage(undefined);
    setFailure(undefined);
    try {
      setMessage(await action());
      reload();
    } catch (err) {
      setFailure(failureOf(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, message, failure, run };
}

function AddRequestRule({ onAdded }: { onAdded: () => void }) {
  const [operationId, setOperationId] = useState('');
  const [method, setMethod] = useState('');
  const [path, setPath] = useState('');
  const [effect, setEffect] = useState<Effect>('status');
  const [status, setStatus] = useState('503');
  const [latencyMs, setLatencyMs] = useState('2000');
  const [lostStatus, setLostStatus] = useState('');
  const [times, setTimes] = useState('1');
  const [probability, setProbability] = useState('');
  const [seed, setSeed] = useState('');
  const action = useAction(onAdded);

  const submit = (e: Event) => {
    e.preventDefault();
    const rule: Obj = {};
    if (operationId.trim()) rule.operationId = operationId.trim();
    if (method) rule.method = method;
    if (path.trim()) rule.path = path.trim();
    if (effect === 'status') rule.status = Number(status);
    if (effect === 'latencyMs') rule.latencyMs = numberOf(latencyMs);
    if (effect === 'reset') rule.reset = true;
    if (effect === 'lostResponse') {
      rule.lostResponse = true;
      if (lostStatus) rule.lostResponseStatus = Number(lostStatus);
    }
    if (numberOf(times) !== undefined) rule.times = numberOf(times);
    if (numberOf(probability) !== undefined) rule.probability = numberOf(probability);
    if (numberOf(seed) !== undefined) rule.seed = numberOf(seed);
    void action.run(async () => {
      const added = await post(`${ADMIN}/faults`, rule);
      return `Added ${added.id}.`;
    });
  };

  return (
    <>
      <form class="filters" onSubmit={submit} aria-label="Add a fault rule on requests">
        <label>
          Operation
          <input
            value={operationId}
            onInput={(e) => setOperationId(e.currentTarget.value)}
            placeholder="createTransferOut"
            spellcheck={false}
          />
        </label>
        <label>
          Method
          <select value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
            {METHODS.map((m) => (
              <option value={m} key={m}>
                {m || 'Any'}
              </option>
            ))}
          </select>
        </label>
        <label>
          Path
          <input
            value={path}
            onInput={(e) => setPath(e.currentTarget.value)}
            placeholder="/quotes/*/execute"
            spellcheck={false}
          />
        </label>
        <label>
          Effect
          <select value={effect} onChange={(e) => setEffect(e.currentTarget.value as Effect)}>
            {EFFECTS.map(([value, label]) => (
              <option value={value} key={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {effect === 'status' ? (
          <label>
            Status
            <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
              {STATUSES.map((s) => (
                <option value={s} key={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {effect === 'latencyMs' ? (
          <label>
            Latency (ms)
            <input
              type="number"
              min="1"
              max="60000"
              value={latencyMs}
              onInput={(e) => setLatencyMs(e.currentTarget.value)}
            />
          </label>
        ) : null}
        {effect === 'lostResponse' ? (
          <label>
            Then answer
            <select value={lostStatus} onChange={(e) => setLostStatus(e.currentTarget.value)}>
              <option value="">nothing (close)</option>
              {STATUSES.slice(1).map((s) => (
                <option value={s} key={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <label>
          Times
          <input type="number" min="1" value={times} onInput={(e) => setTimes(e.currentTarget.value)} />
        </label>
        <label>
          Probability
          <input
            type="number"
            min="0"
            max="1"
            step="any"
            value={probability}
            placeholder="1"
            onInput={(e) => setProbability(e.currentTarget.value)}
          />
        </label>
        <label>
          Seed
          <input type="number" min="0" value={seed} onInput={(e) => setSeed(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Add rule
        </button>
      </form>
      <p aria-live="polite" class="done">
        {action.message ?? ''}
      </p>
      <Problem error={action.failure} />
    </>
  );
}

function AddWebhookRule({ onAdded }: { onAdded: () => void }) {
  const [eventType, setEventType] = useState('');
  const [effect, setEffect] = useState<string>('duplicate');
  const [delaySeconds, setDelaySeconds] = useState('60');
  const [times, setTimes] = useState('1');
  const action = useAction(onAdded);
  const submit = (e: Event) => {
    e.preventDefault();
    const rule: Obj = { effect };
    if (eventType.trim()) rule.eventType = eventType.trim();
    if (effect === 'delay') rule.delaySeconds = numberOf(delaySeconds);
    if (numberOf(times) !== undefined) rule.times = numberOf(times);
    void action.run(async () => {
      const added = await post(`${ADMIN}/webhook-faults`, rule);
      return `Added ${added.id}.`;
    });
  };
  return (
    <>
      <form class="filters" onSubmit={submit} aria-label="Add a fault rule on webhooks">
        <label>
          Event type
          <input
            value={eventType}
            onInput={(e) => setEventType(e.currentTarget.value)}
            placeholder="OUTGOING_PAYMENT.COMPLETED"
            spellcheck={false}
          />
        </label>
        <label>
          Webhook effect
          <select value={effect} onChange={(e) => setEffect(e.currentTarget.value)}>
            {WEBHOOK_EFFECTS.map((value) => (
              <option value={value} key={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
        {effect === 'delay' ? (
          <label>
            Delay (s, sandbox clock)
            <input
              type="number"
              min="1"
              step="any"
              value={delaySeconds}
              onInput={(e) => setDelaySeconds(e.currentTarget.value)}
            />
          </label>
        ) : null}
        <label>
          Deliveries
          <input type="number" min="1" value={times} onInput={(e) => setTimes(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Add webhook rule
        </button>
      </form>
      <p aria-live="polite" class="done">
        {action.message ?? ''}
      </p>
      <Problem error={action.failure} />
    </>
  );
}

async function loadRules() {
  const [requests, webhooks] = await Promise.all([
    get<{ data: Obj[] }>(`${ADMIN}/faults`),
    get<{ data: Obj[] }>(`${ADMIN}/webhook-faults`),
  ]);
  return { requests: requests.data, webhooks: webhooks.data };
}

/** One kind of rules: a row each, with its cells and a Remove button, and a button to remove them all. */
function RulesTable({
  kind,
  path,
  rules,
  head,
  cells,
  empty,
  remove,
  busy,
}: {
  kind: string;
  path: string;
  rules: Obj[] | undefined;
  head: string[];
  cells: (rule: Obj) => ComponentChildren[];
  empty: string;
  remove: (path: string, what: string) => void;
  busy: boolean;
}) {
  return (
    <>
      <Table
        caption={`Fault rules on ${kind}`}
        head={['Added', ...head, 'Fired', 'State', 'Remove']}
        count={rules?.length}
        empty={empty}
      >
        {(rules ?? []).map((rule) => (
          <tr key={rule.id}>
            <td>
              <Time iso={rule.createdAt} />
            </td>
            {cells(rule).map((cell, i) => (
              <td key={head[i]}>{cell}</td>
            ))}
            <td class="num" title={rule.matchedCount !== undefined ? `${rule.matchedCount} matched` : undefined}>
              {rule.firedCount}
            </td>
            <td>{rule.active ? 'active' : 'used up'}</td>
            <td>
              <button
                type="button"
                class="danger"
                disabled={busy}
                aria-label={`Remove rule ${rule.id}`}
                onClick={() => remove(`${path}/${id(rule.id)}`, rule.id)}
              >
                Remove
              </button>
            </td>
          </tr>
        ))}
      </Table>
      {(rules?.length ?? 0) > 0 ? (
        <button type="button" class="danger" disabled={busy} onClick={() => remove(path, `every rule on ${kind}`)}>
          Remove every rule on {kind}
        </button>
      ) : null}
    </>
  );
}

/** The fault rules in force on the platform, to add and remove. */
export function FaultsSection() {
  const loaded = usePoll(loadRules, 'fault-rules');
  const removal = useAction(loaded.reload);
  const remove = (path: string, what: string) =>
    void removal.run(async () => {
      await request('DELETE', path);
      return `Removed ${what}.`;
    });

  return (
    <section aria-labelledby="faults-heading">
      <h2 id="faults-heading">Fault rules</h2>
      <p class="note">
        Rules on this platform's Grid API requests answer a 429 or a 5xx, delay the answer, reset the connection or lose
        the answer after the operation ran; rules on its webhooks send one twice, late, out of order, or drop a try. See
        docs/testing-failure.md.
      </p>
      <Live loaded={loaded} />
      <Problem error={loaded.error} />
      <p aria-live="polite" class="done">
        {removal.message ?? ''}
      </p>
      <Problem error={removal.failure} />
      <h3>On requests</h3>
      <AddRequestRule onAdded={loaded.reload} />
      <RulesTable
        kind="requests"
        path={`${ADMIN}/faults`}
        rules={loaded.data?.requests}
        head={['Matches', 'Effect', 'How often']}
        cells={(rule) => [matcher(rule), effectText(rule), howOften(rule)]}
        empty="No rule: requests are answered as usual."
        remove={remove}
        busy={removal.busy}
      />
      <h3>On webhooks</h3>
      <AddWebhookRule onAdded={loaded.reload} />
      <RulesTable
        kind="webhooks"
        path={`${ADMIN}/webhook-faults`}
        rules={loaded.data?.webhooks}
        head={['Event type', 'Effect', 'How often']}
        cells={(rule) => [
          rule.eventType ?? 'every type',
          rule.effect === 'delay' ? `delay ${rule.delaySeconds} s` : rule.effect,
          howOften(rule),
        ]}
        empty="No rule: webhooks are delivered as usual."
        remove={remove}
        busy={removal.busy}
      />
    </section>
  );
}
