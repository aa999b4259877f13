// The sandbox clock: the platform's time, moving it forward, what became due when it moved,
// and how the platform's payouts settle on that clock (its settlement timing).

import { useEffect, useState } from 'preact/hooks';
import { HOSTED_SETTLEMENT } from '../../../src/rails/settlement.js';
import { ADMIN, get, type Obj, type Page, post, query, request } from '../api.js';
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

const TIMINGS = [
  ['hosted', "Hosted: a bank payout stays PROCESSING for its rail's time, as on the hosted sandbox"],
  ['instant', 'Instant: a bank payout completes when it is accepted'],
] as const;

/** The platform's settlement timing, switched here, and the time of each rail when it is hosted. */
function SettlementTiming() {
  const platform = usePoll(() => get(`${ADMIN}/platform`), 'settlement-timing', 5000);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Error | undefined>(undefined);
  // The choice just made, shown until the platform's next reading says the same.
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  const current: string | undefined = platform.data?.settlementTiming;
  useEffect(() => {
    if (chosen !== undefined && current === chosen) setChosen(undefined);
  }, [current, chosen]);
  const shown = chosen ?? current;

  const choose = async (timing: string) => {
    setBusy(true);
    setFailure(undefined);
    setChosen(timing);
    try {
      await request('PATCH', `${ADMIN}/platform`, { settlementTiming: timing });
      platform.reload();
    } catch (err) {
      setChosen(undefined);
      setFailure(err as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h2>Settlement timing</h2>
      <p class="note">
        How this platform's outgoing bank payouts (transfers out, quote payouts to bank accounts) settle. A payout keeps
        the timing it started with; advancing the clock past a rail's time completes it at once.
      </p>
      <fieldset class="actions">
        <legend class="visually-hidden">Settlement timing</legend>
        {TIMINGS.map(([timing, label]) => (
          <label class="check" key={timing}>
            <input
              type="radio"
              name="settlement-timing"
              value={timing}
              checked={shown === timing}
              disabled={busy || shown === undefined}
              onChange={() => void choose(timing)}
            />
            {label}
          </label>
        ))}
      </fieldset>
      <Problem error={failure ?? platform.error} />
      <Table
        caption="How long a payout stays PROCESSING when the timing is hosted"
        head={['Rails', 'PROCESSING for']}
        count={HOSTED_SETTLEMENT.length}
      >
        {HOSTED_SETTLEMENT.map((row) => (
          <tr key={row.rails[0]}>
            <td title={row.why}>{row.rails.join(', ')}</td>
            <td>{duration(row.seconds).slice(1)}</td>
          </tr>
        ))}
      </Table>
    </>
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
      <PageTitle note="Each platform has its own clock. Delayed outcomes (a payout's settlement, a 005 payout's failure, quote expiry, webhook retries) fall due on it; moving it forward runs them before it answers.">
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
      <SettlementTiming />
    </section>
  );
}
