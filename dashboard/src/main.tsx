// The railyard dashboard: sign in with a platform's client id and secret, then browse that
// platform's sandbox. Pages are chosen by the URL's fragment (#/transactions/Transaction:…), so
// the server serves one page and a link to any view can be shared or reloaded.

import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import {
  ADMIN,
  ApiError,
  type Credentials,
  get,
  onSignedOut,
  type Obj,
  request,
  saveCredentials,
  savedCredentials,
  setCredentials,
} from './api.js';
import { clockTime, duration, viewerZone } from './format.js';
import { AccountPage, ExternalAccountsPage, InternalAccountsPage } from './pages/accounts.js';
import { ClockPage } from './pages/clock.js';
import { CustomerPage, CustomersPage } from './pages/customers.js';
import { AgentsPage, CardsPage, StablecoinsPage } from './pages/products.js';
import { TestingPage } from './pages/testing.js';
import { ReportPage, RequestPage, RequestsPage } from './pages/requests.js';
import { TransactionPage, TransactionsPage } from './pages/transactions.js';
import { DeliveryPage, WebhooksPage } from './pages/webhooks.js';
import { Problem, usePoll } from './ui.js';

const SECTIONS = [
  ['transactions', 'Transactions'],
  ['customers', 'Customers'],
  ['accounts', 'Internal accounts'],
  ['external-accounts', 'External accounts'],
  ['webhooks', 'Webhooks'],
  ['requests', 'Requests'],
  ['clock', 'Clock'],
  ['agents', 'Agents'],
  ['cards', 'Cards'],
  ['stablecoins', 'Stablecoins'],
  ['testing', 'Testing'],
] as const;

interface Route {
  section: string;
  id: string | undefined;
  params: URLSearchParams;
}

function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#\/?/, '').split('?', 2);
  const [section = 'transactions', rawId] = path.split('/');
  return {
    section: section || 'transactions',
    id: rawId ? decodeURIComponent(rawId) : undefined,
    params: new URLSearchParams(search),
  };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

function SignIn({ onSignedIn, notice }: { onSignedIn: (c: Credentials, platform: Obj) => void; notice?: string }) {
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [failure, setFailure] = useState<Error | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFailure(undefined);
    const credentials = { clientId: clientId.trim(), clientSecret };
    try {
      const platform = await request('GET', `${ADMIN}/platform`, undefined, credentials);
      onSignedIn(credentials, platform);
    } catch (err) {
      setFailure(
        err instanceof ApiError && err.status === 401
          ? new Error('These credentials were not accepted. Use the client id and secret npm start printed.')
          : (err as Error),
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>railyard dashboard</h1>
      <p>
        Sign in with a platform's client id and secret (<code>npm start</code> prints them). They are kept in this
        browser tab only, and the dashboard shows only that platform's data.
      </p>
      {notice ? <p class="problem">{notice}</p> : null}
      <form onSubmit={submit} aria-label="Sign in">
        <label>
          Client id
          <input
            name="clientId"
            autocomplete="username"
            value={clientId}
            onInput={(e) => setClientId(e.currentTarget.value)}
            required
            spellcheck={false}
          />
        </label>
        <label>
          Client secret
          <input
            name="clientSecret"
            type="password"
            autocomplete="current-password"
            value={clientSecret}
            onInput={(e) => setClientSecret(e.currentTarget.value)}
            required
          />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <Problem error={failure} />
    </main>
  );
}

/** The sandbox clock in the header: the platform's time, ticking, and how far ahead of real time it is. */
function ClockBadge({ version }: { version: number }) {
  const clock = usePoll(() => get(`${ADMIN}/clock`), `badge-${version}`, 2000);
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, []);
  if (clock.data === undefined) return null;
  const now = new Date(Date.now() + clock.data.offsetSeconds * 1000);
  return (
    <a class="clock-badge" href="#/clock" title={`Times are shown in ${viewerZone}`}>
      <span class="visually-hidden">Sandbox clock: </span>
      <time dateTime={now.toISOString()}>{clockTime(now)}</time>{' '}
      <span class="offset">{clock.data.offsetSeconds === 0 ? 'real time' : duration(clock.data.offsetSeconds)}</span>
    </a>
  );
}

/**
 * The platform's strict-identifiers setting in the header: on, requests are also refused for
 * the check digits and shapes the reference does not state. A click switches it.
 */
function StrictToggle({ platform, onChanged }: { platform: Obj; onChanged: (platform: Obj) => void }) {
  const [busy, setBusy] = useState(false);
  const on = platform.strictIdentifiers === true;
  const toggle = async () => {
    setBusy(true);
    try {
      onChanged(await request('PATCH', `${ADMIN}/platform`, { strictIdentifiers: !on }));
    } finally {
      setBusy(false);
    }
  };
  return (
    <button
      type="button"
      class={`strict-toggle${on ? ' on' : ''}`}
      aria-pressed={on}
      disabled={busy}
      title="Strict identifiers: also refuse check digits, checksums and shapes the reference does not state (IBAN, CLABE, ABA, addresses). Click to switch."
      onClick={() => void toggle()}
    >
      Strict identifiers: {on ? 'on' : 'off'}
    </button>
  );
}

function Page({ route, onAdvanced }: { route: Route; onAdvanced: () => void }) {
  const { section, id, params } = route;
  switch (section) {
    case 'transactions':
      return id ? <TransactionPage transactionId={id} /> : <TransactionsPage params={params} />;
    case 'customers':
      return id ? <CustomerPage customerId={id} /> : <CustomersPage params={params} />;
    case 'accounts':
      return id ? <AccountPage accountId={id} /> : <InternalAccountsPage />;
    case 'external-accounts':
      return <ExternalAccountsPage />;
    case 'webhooks':
      return id ? <DeliveryPage deliveryId={id} /> : <WebhooksPage params={params} />;
    case 'requests':
      if (id === 'report') return <ReportPage />;
      return id ? <RequestPage requestId={id} /> : <RequestsPage params={params} />;
    case 'clock':
      return <ClockPage onAdvanced={onAdvanced} />;
    case 'agents':
      return <AgentsPage />;
    case 'cards':
      return <CardsPage />;
    case 'stablecoins':
      return <StablecoinsPage />;
    case 'testing':
      return <TestingPage onRestored={onAdvanced} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page <code>{section}</code>. <a href="#/transactions">Transactions</a>
          </p>
        </section>
      );
  }
}

function App() {
  const [credentials, setSignedIn] = useState<Credentials | undefined>(savedCredentials);
  const [platform, setPlatform] = useState<Obj | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [clockVersion, setClockVersion] = useState(0);
  const route = useRoute();

  const signOut = (why?: string) => {
    saveCredentials(undefined);
    setCredentials(undefined);
    setSignedIn(undefined);
    setPlatform(undefined);
    setNotice(why);
  };

  useEffect(() => onSignedOut(() => signOut('The server no longer accepts these credentials. Sign in again.')), []);
  useEffect(() => {
    if (credentials !== undefined && platform === undefined)
      get(`${ADMIN}/platform`).then(setPlatform, () => undefined);
  }, [credentials, platform]);

  if (credentials === undefined)
    return (
      <SignIn
        notice={notice}
        onSignedIn={(c, p) => {
          saveCredentials(c);
          setCredentials(c);
          setSignedIn(c);
          setPlatform(p);
          setNotice(undefined);
        }}
      />
    );

  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <div class="brand">
          <strong>railyard</strong>
          <span class="platform" title={platform?.id}>
            {platform?.name ?? '…'}
          </span>
        </div>
        {platform !== undefined ? <StrictToggle platform={platform} onChanged={setPlatform} /> : null}
        <ClockBadge version={clockVersion} />
        <button type="button" class="secondary" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <nav aria-label="Sections">
        <ul>
          {SECTIONS.map(([key, label]) => (
            <li key={key}>
              <a href={`#/${key}`} aria-current={route.section === key ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1} data-page={`${route.section}/${route.id ?? ''}`}>
        <Page
          key={`${route.section}/${route.id ?? ''}`}
          route={route}
          onAdvanced={() => setClockVersion((v) => v + 1)}
        />
      </main>
    </>
  );
}

setCredentials(savedCredentials());
const root = document.getElementById('app');
if (root !== null) {
  root.textContent = '';
  render(<App />, root);
}
