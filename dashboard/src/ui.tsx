// Shared pieces of the dashboard's pages: polling, tables, status badges, links.

import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, get, GRID, id as pathId, type Obj, type Page } from './api.js';
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

/** Whether a page's data is live, and what went wrong when it is not. */
export function Live({ loaded }: { loaded: Loaded<unknown> }) {
  return (
    <>
      <p class="live" aria-live="polite">
        {loaded.loading ? 'Loading…' : loaded.error ? 'Not updating (see the error)' : 'Live: updates every 1.5 s'}
      </p>
      <Problem error={loaded.error} />
    </>
  );
}

/** The head of a detail page: its title, the way back to its list, and whether it is live. */
export function DetailHead({
  children,
  back,
  backTo,
  loaded,
}: {
  children: ComponentChildren;
  /** The list's page and the words of the link back to it. */
  backTo: string;
  back: string;
  loaded: Loaded<unknown>;
}) {
  return (
    <>
      <PageTitle>{children}</PageTitle>
      <p>
        <a href={href(backTo)}>← {back}</a>
      </p>
      <Live loaded={loaded} />
    </>
  );
}

/** A list's filters: changing one reloads the list (nothing to submit). */
export function Filters({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label={label}>
      {children}
    </form>
  );
}

/** A filter with a fixed set of values: each a value shown as itself ('' as Any), or [value, text]. */
export function SelectFilter({
  label,
  value,
  onChange,
  options,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  options: readonly (string | readonly [string, string])[];
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {options.map((option) => {
          const [optionValue, text] = typeof option === 'string' ? [option, option || 'Any'] : option;
          return (
            <option value={optionValue} key={optionValue}>
              {text}
            </option>
          );
        })}
      </select>
    </label>
  );
}

/**
 * A free-text filter, applied when the field changes (Enter or leaving it); `asTyped` applies
 * it at every keystroke instead, for a search the page does itself.
 */
export function TextFilter({
  label,
  value,
  onChange,
  placeholder,
  asTyped = false,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  placeholder: string;
  asTyped?: boolean;
}) {
  return (
    <label>
      {label}
      <input
        type={asTyped ? 'search' : 'text'}
        value={value}
        {...(asTyped
          ? { onInput: (e: Event) => onChange((e.currentTarget as HTMLInputElement).value) }
          : { onChange: (e: Event) => onChange((e.currentTarget as HTMLInputElement).value) })}
        placeholder={placeholder}
        spellcheck={false}
      />
    </label>
  );
}

/** A list's caption with its total count, when the API gave one. */
export function countedCaption(caption: string, page: Page | undefined): string {
  return page?.totalCount !== undefined ? `${caption} (${page.totalCount})` : caption;
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

// Cards never change their number: each is read once and kept for the page's life (a card
// that cannot be read is kept as null, and shown without its digits).
const cardsRead = new Map<string, Obj | null>();
const cardsAsked = new Set<string>();

/** The cards named by `cardIds`, read once each; the map fills as they arrive. */
export function useCards(cardIds: (string | undefined)[]): Map<string, Obj | null> {
  const [, setArrived] = useState(0);
  const missing = [...new Set(cardIds)].filter((cardId): cardId is string => !!cardId && !cardsAsked.has(cardId));
  const key = missing.join(' ');
  useEffect(() => {
    if (key === '') return undefined;
    let mounted = true;
    void Promise.all(
      key.split(' ').map(async (cardId) => {
        cardsAsked.add(cardId);
        try {
          cardsRead.set(cardId, await get(`${GRID}/cards/${pathId(cardId)}`));
        } catch {
          cardsRead.set(cardId, null);
        }
      }),
    ).then(() => {
      if (mounted) setArrived((n) => n + 1);
    });
    return () => {
      mounted = false;
    };
  }, [key]);
  return cardsRead;
}

/** "Card •••• 4242": a card by its last four digits (while they load, or unknown: "Card"). */
export function cardLabel(card: Obj | null | undefined): string {
  return card?.last4 ? `Card •••• ${card.last4}` : 'Card';
}
