// The sandbox clock: the platform's time, moving it forward, and what became due when it moved.

import { useState } from 'preact/hooks';
import { ADMIN, get, type Obj, type Page, post, query } from '../api.js';
import { duration, viewerZone, when } from '../format.js';
import { href, IdLink, PageTitle, Problem, Status, Table, Time, usePoll } from '../ui.js';

const UNITS = [
  ['seconds', 1],
  ['minutes', 60],
  ['hours', 3_600],
  ['days', 86_400],
] as const;

const QUICK: [string, number][] = [
  ['+30 s', 30],
  ['+6 min', 360],
  ['+1 h', 3_600],
  ['+1 day', 86_400],
];

interface Advanced {
  from: string;
  now: string;
  jobsRun: number;
  events: Obj[];
}

function resourceLink(resourceId: string) {
  if (resourceId.startsWith('Transaction:')) return <IdLink to={href('transactions', resourceId)} value={resourceId} />;
  if (resourceId.startsWith('InternalAccount:')) return <IdLink to={href('accounts', resourceId)} value={resourceId} />;
  if (resourceId.startsWith('Customer:')) return <IdLink to={href('customers', resourceId)} value={resourceId} />;
  return (
    <code class="id" title={resourceId}>
      {resourceId}
    </code>
  );
}

export function ClockPage({ onAdvanced }: { onAdvanced: () => void }) {
  const clock = usePoll(() => get(`${ADMIN}/clock`), 'clock', 2000);
  const [amount, setAmount] = useState('6');
  const [unit, setUnit] = useState<string>('minutes');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Error | undefined>(undefined);
  const [advanced, setAdvanced] = useState<Advanced | undefined>(undefined);

  const advance = async (seconds: number) => {
    setBusy(true);
    setFailure(undefined);
    try {
      const before = await get(`${ADMIN}/clock`);
      const after = await post(`${ADMIN}/clock/advance`, { seconds });
      // Jobs that ran during the advance recorded their changes at the new time, so every event
      // from the old time on is what the advance made due (or what happened meanwhile).
      const events = await get<Page>(`${ADMIN}/events${query({ createdAfter: before.now, limit: 100 })}`);
      setAdvanced({ from: before.now, now: after.now, jobsRun: after.jobsRun, events: events.data });
      clock.reload();
      onAdvanced();
    } catch (err) {
      setFailure(err as Error);
    } finally {
      setBusy(false);
    }
  };

  const submit = (e: Event) => {
    e.preventDefault();
    const factor = UNITS.find(([name]) => name === unit)?.[1] ?? 1;
    const value = Number(amount);
    if (!Number.isFinite(value) || value <= 0) {
      setFailure(new Error('Enter an amount above 0.'));
      return;
    }
    void advance(value * factor);
  };

  return (
    <section>
      <PageTitle note="Each platform has its own clock. Delayed outcomes (a 005 payout's failure, quote expiry, webhook retries) fall due on it; moving it forward runs them before it answers.">
        Sandbox clock
      </PageTitle>
      <Problem error={clock.error} />
      {clock.data !== undefined ? (
        <dl class="fields big">
          <div>
            <dt>Sandbox time</dt>
            <dd>
              <time dateTime={clock.data.now}>{when(clock.data.now)}</time>
            </dd>
          </div>
          <div>
            <dt>Ahead of real time by</dt>
            <dd>{duration(clock.data.offsetSeconds)}</dd>
          </div>
          <div>
            <dt>Shown in</dt>
            <dd>{viewerZone}</dd>
          </div>
        </dl>
      ) : null}
      <h2>Advance</h2>
      <form class="filters" onSubmit={submit} aria-label="Advance the sandbox clock">
        <label>
          Amount
          <input
            type="number"
            min="0"
            step="any"
            value={amount}
            onInput={(e) => setAmount(e.currentTarget.value)}
            required
          />
        </label>
        <label>
          Unit
          <select value={unit} onChange={(e) => setUnit(e.currentTarget.value)}>
            {UNITS.map(([name]) => (
              <option value={name} key={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Advancing…' : 'Advance'}
        </button>
      </form>
      <fieldset class="actions">
        <legend class="visually-hidden">Quick advances</legend>
        {QUICK.map(([label, seconds]) => (
          <button type="button" class="secondary" key={label} disabled={busy} onClick={() => void advance(seconds)}>
            {label}
          </button>
        ))}
      </fieldset>
      <Problem error={failure} />
      <div aria-live="polite">
        {advanced !== undefined ? (
          <>
            <h2>What became due</h2>
            <p>
              Moved from {when(advanced.from)} to {when(advanced.now)}; this server ran {advanced.jobsRun} job
              {advanced.jobsRun === 1 ? '' : 's'}.
            </p>
            <Table
              caption="Events recorded since the advance started"
              head={['Time', 'Event', 'Status', 'About']}
              count={advanced.events.length}
              empty="Nothing was due."
            >
              {advanced.events.map((event) => (
                <tr key={event.id}>
                  <td>
                    <Time iso={event.timestamp} />
                  </td>
                  <td>
                    <code>{event.type}</code>
                  </td>
                  <td>
                    <Status value={event.data?.status} />
                  </td>
                  <td>{resourceLink(event.resourceId)}</td>
                </tr>
              ))}
            </Table>
          </>
        ) : null}
      </div>
    </section>
  );
}
