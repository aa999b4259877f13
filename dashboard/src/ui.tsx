// Shared pieces of the dashboard's pages: polling, tables, status badges, links.

import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, get, GRID, type Obj, type Page } from './api.js';
import { shortId, when } from './format.js';

/** How often a live page reads again. */
export const POLL_MS = 1500;

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | Error | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads `load()` now, again whenever `key` changes, and every `intervalMs` while the tab is
 * visible (0: once). One request at a time; the last answer wins.
 */
export function usePoll<T>(load: () => Promise<T>, key: string, intervalMs = POLL_MS): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const busy = useRef(false);
  const generation = useRef(0);

  const run = useCallback(async () => {
    if (busy.current) return;
    busy.current = true;
    const mine = generation.current;
    try {
      const value = await loadRef.current();
      if (mine === generation.current) {
        setData(value);
        setError(undefined);
      }
    } catch (err) {
      if (mine === generation.current) setError(err as Error);
    } finally {
      busy.current = false;
      if (mine === generation.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    generation.current++;
    busy.current = false;
    setData(undefined);
    setLoading(true);
    void run();
    if (intervalMs <= 0) return undefined;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void run();
    }, intervalMs);
    return () => clearInterval(timer);
  }, [key, intervalMs, run]);

  return { data, error, loading, reload: () => void run() };
}

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

export function IdLink({ to, value }: { to: string; value: string | undefined | null }) {
  if (!value) return <span>—</span>;
  return (
    <a href={to} title={value} class="id">
      {shortId(value)}
    </a>
  );
}

export function Id({ value }: { value: string | undefined | null }) {
  return (
    <code class="id" title={value ?? undefined}>
      {shortId(value)}
    </code>
  );
}

export function Time({ iso }: { iso: string | undefined | null }) {
  if (!iso) return <span>—</span>;
  return (
    <time dateTime={iso} title={`${iso} (sandbox clock, UTC)`}>
      {when(iso)}
    </time>
  );
}

const TONES: Record<string, string> = {
  COMPLETED: 'good',
  APPROVED: 'good',
  ACTIVE: 'good',
  DELIVERED: 'good',
  SUCCEEDED: 'good',
  ENABLED: 'good',
  SETTLED: 'good',
  PROVISIONED: 'good',
  FAILED: 'bad',
  REJECTED: 'bad',
  EXPIRED: 'bad',
  CLOSED: 'bad',
  EXCEPTION: 'bad',
  REVOKED: 'bad',
  INVALID: 'bad',
  DECLINED: 'bad',
};

export function Status({ value }: { value: string | undefined | null }) {
  if (!value) return <span>—</span>;
  const tone = TONES[value] ?? (/FAIL|REJECT/.test(value) ? 'bad' : 'wait');
  return <span class={`status ${tone}`}>{value.replace(/_/g, ' ')}</span>;
}

export function Problem({ error }: { error: Error | undefined }) {
  if (error === undefined) return null;
  const code = error instanceof ApiError ? `${error.status} ${error.code}: ` : '';
  return (
    <p class="problem" role="alert">
      {code}
      {error.message}
    </p>
  );
}

/** A table that scrolls sideways on a narrow screen (and by keyboard: it takes focus). */
export function Table({
  caption,
  head,
  children,
  empty,
  count,
}: {
  caption: string;
  head: string[];
  children: ComponentChildren;
  empty?: string | undefined;
  count: number | undefined;
}) {
  const ref = useRef<HTMLTableElement>(null);
  // On a narrow screen each row is shown as a card whose cells carry their column's name (CSS
  // reads data-label). The explicit roles keep the table's semantics when CSS changes its
  // display, which otherwise drops them in some browsers.
  useLayoutEffect(() => {
    const table = ref.current;
    if (table === null) return;
    table.setAttribute('role', 'table');
    for (const group of table.querySelectorAll('thead, tbody')) group.setAttribute('role', 'rowgroup');
    for (const row of table.querySelectorAll('tr')) {
      row.setAttribute('role', 'row');
      for (const cell of row.querySelectorAll('th')) cell.setAttribute('role', 'columnheader');
      let index = 0;
      for (const cell of row.querySelectorAll('td')) {
        cell.setAttribute('role', 'cell');
        if (!cell.classList.contains('empty')) cell.dataset.label = head[index] ?? '';
        index++;
      }
    }
  });
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
    <section class="table-wrap" aria-label={caption} tabIndex={0}>
      <table ref={ref}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {count === 0 ? (
            <tr>
              <td colSpan={head.length} class="empty">
                {empty ?? 'Nothing yet.'}
              </td>
            </tr>
          ) : (
            children
          )}
        </tbody>
      </table>
    </section>
  );
}

export function Fields({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="fields">
      {rows.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value ?? '—'}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Raw({ value, label = 'Raw JSON' }: { value: unknown; label?: string }) {
  return (
    <details class="raw">
      <summary>{label}</summary>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

export function PageTitle({ children, note }: { children: ComponentChildren; note?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  // Moving between pages moves focus to the new page's heading, so a screen reader announces it.
  useEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);
  return (
    <header class="page-title">
      <h1 tabIndex={-1} ref={ref}>
        {children}
      </h1>
      {note !== undefined ? <p class="note">{note}</p> : null}
    </header>
  );
}

export function Live({ loaded }: { loaded: Loaded<unknown> }) {
  return (
    <p class="live" aria-live="polite">
      {loaded.loading ? 'Loading…' : loaded.error ? 'Not updating (see the error)' : 'Live: updates every 1.5 s'}
    </p>
  );
}

/** The name a customer goes by: an individual's full name, a business's legal name. */
export function customerName(customer: Obj | undefined): string {
  if (customer === undefined) return '—';
  return customer.fullName ?? customer.businessInfo?.legalName ?? customer.platformCustomerId ?? customer.id;
}

/** The names of the 100 newest customers, to show a name where an object names its customer by id. */
export function useCustomerNames(): Map<string, string> {
  const loaded = usePoll(() => get<Page>(`${GRID}/customers?limit=100`), 'customer-names', 10_000);
  return useMemo(() => new Map((loaded.data?.data ?? []).map((c) => [c.id as string, customerName(c)])), [loaded.data]);
}

/** Who owns something: the platform, or a customer (linked, by name when known). */
export function Owner({ id, names }: { id: string | undefined | null; names: Map<string, string> }) {
  if (!id || id.startsWith('Platform:')) return <span>Platform</span>;
  return (
    <a href={href('customers', id)} title={id}>
      {names.get(id) ?? shortId(id)}
    </a>
  );
}
