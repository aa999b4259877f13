// Transactions (and the quotes behind cross-currency ones): a filterable live list, and one
// transaction's detail with its status timeline, every event and its money movements.

import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ADMIN, get, GRID, id, type Obj, type Page, query } from '../api.js';
import { currencyAmount, money } from '../format.js';
import {
  DetailHead,
  cardLabel,
  countedCaption,
  Fields,
  Filters,
  href,
  IdLink,
  Live,
  Owner,
  PageTitle,
  Raw,
  SelectFilter,
  Status,
  Table,
  TextFilter,
  Time,
  useCards,
  useCustomerNames,
  usePoll,
} from '../ui.js';

// The filters GET /transactions takes (card transactions list with type CARD but are found by
// their funding account, not by a type filter).
const TYPES = ['', 'OUTGOING', 'INCOMING'];
const STATUSES = [
  '',
  'CREATED',
  'PENDING',
  'PENDING_AUTHORIZATION',
  'PROCESSING',
  'COMPLETED',
  'REJECTED',
  'FAILED',
  'REFUNDED',
  'EXPIRED',
];

/**
 * What a transaction moved, in major units: what was sent, else what was received; for a card
 * transaction, what was authorized (its detail shows what settled and what came back).
 */
export function transactionAmount(tx: Obj): string {
  if (tx.type === 'CARD') return currencyAmount(tx.authorizedAmount);
  if (tx.sentAmount !== undefined) return currencyAmount(tx.sentAmount);
  if (tx.receivedAmount !== undefined) return currencyAmount(tx.receivedAmount);
  if (tx.amount !== undefined && typeof tx.amount === 'object') return currencyAmount(tx.amount);
  return '—';
}

function endpoint(side: Obj | undefined): string | undefined {
  return side?.accountId ?? side?.umaAddress ?? side?.cardId ?? side?.sourceType ?? side?.destinationType;
}

/** A card transaction's merchant: its descriptor, then its category code and country when known. */
function merchantLabel(merchant: Obj | undefined): string {
  if (merchant?.descriptor === undefined) return '—';
  const more = [merchant.mcc ? `MCC ${merchant.mcc}` : '', merchant.country ?? ''].filter(Boolean).join(', ');
  return more ? `${merchant.descriptor} (${more})` : merchant.descriptor;
}

/** Where a transaction's money came from and went: accounts, or a card and its merchant. */
function Sides({ tx, cards }: { tx: Obj; cards: Map<string, Obj | null> }) {
  if (tx.type === 'CARD') {
    const card = <span title={tx.cardId}>{cardLabel(cards.get(tx.cardId))}</span>;
    const merchant = <span title={merchantLabel(tx.merchant)}>{tx.merchant?.descriptor ?? '—'}</span>;
    // A debit pays the merchant from the card; a credit (a merchant's refund) comes back to it.
    return tx.direction === 'CREDIT' ? (
      <>
        {merchant} → {card}
      </>
    ) : (
      <>
        {card} → {merchant}
      </>
    );
  }
  return (
    <>
      <span title={endpoint(tx.source)}>{shortSide(tx.source)}</span> →{' '}
      <span title={endpoint(tx.destination)}>{shortSide(tx.destination)}</span>
    </>
  );
}

export function TransactionRows({ rows, names }: { rows: Obj[]; names: Map<string, string> }) {
  const cards = useCards(rows.map((tx) => tx.cardId));
  return (
    <>
      {rows.map((tx) => (
        <tr key={tx.id}>
          <td>
            <Time iso={tx.createdAt} />
          </td>
          <td>
            <IdLink to={href('transactions', tx.id)} value={tx.id} />
          </td>
          <td>
            <Owner id={tx.customerId} names={names} />
          </td>
          <td>{tx.type ?? '—'}</td>
          <td>
            <Status value={tx.status} />
          </td>
          <td class="num">{transactionAmount(tx)}</td>
          <td>
            <Sides tx={tx} cards={cards} />
          </td>
          <td>
            {tx.quoteId ? (
              <span title={tx.quoteId}>quote</span>
            ) : (
              (tx.paymentRail ?? (tx.type === 'CARD' ? 'card' : ''))
            )}
          </td>
        </tr>
      ))}
    </>
  );
}

function shortSide(side: Obj | undefined): string {
  const value = endpoint(side);
  if (value === undefined) return '—';
  const [kind, rest] = value.includes(':') ? value.split(':', 2) : [value, ''];
  return rest ? `${kind!.replace('Account', '')} …${rest.slice(-6)}` : value;
}

export function TransactionsPage({ params }: { params: URLSearchParams }) {
  const [type, setType] = useState(params.get('type') ?? '');
  const [status, setStatus] = useState(params.get('status') ?? '');
  const [customerId, setCustomerId] = useState(params.get('customerId') ?? '');
  const [account, setAccount] = useState(params.get('accountIdentifier') ?? '');
  const filters = { type, status, customerId: customerId.trim(), accountIdentifier: account.trim(), limit: 50 };
  const loaded = usePoll(() => get<Page>(`${GRID}/transactions${query(filters)}`), JSON.stringify(filters));
  const names = useCustomerNames();

  return (
    <section>
      <PageTitle note="Transfers, quote payments and card transactions, newest first. Quotes appear as the transaction they pay.">
        Transactions
      </PageTitle>
      <Filters label="Filter transactions">
        <SelectFilter label="Type" value={type} onChange={setType} options={TYPES} />
        <SelectFilter label="Status" value={status} onChange={setStatus} options={STATUSES} />
        <TextFilter label="Customer id" value={customerId} onChange={setCustomerId} placeholder="Customer:…" />
        <TextFilter
          label="Account id"
          value={account}
          onChange={setAccount}
          placeholder="InternalAccount:… or ExternalAccount:…"
        />
      </Filters>
      <Live loaded={loaded} />
      <Table
        caption={countedCaption('Transactions', loaded.data)}
        head={['Created', 'Id', 'Customer', 'Type', 'Status', 'Amount', 'From → to', 'Rail']}
        count={loaded.data?.data.length}
        empty="No transactions match."
      >
        <TransactionRows rows={loaded.data?.data ?? []} names={names} />
      </Table>
    </section>
  );
}

interface Detail {
  transaction: Obj;
  timeline: Obj;
  quote: Obj | undefined;
  /** The card of a card transaction (null when it cannot be read). */
  card: Obj | null | undefined;
  deliveries: Page;
}

async function loadDetail(transactionId: string): Promise<Detail> {
  const [transaction, timeline, deliveries] = await Promise.all([
    get(`${GRID}/transactions/${id(transactionId)}`),
    get(`${ADMIN}/transactions/${id(transactionId)}/timeline`),
    get<Page>(`${ADMIN}/webhooks/deliveries${query({ resourceId: transactionId, limit: 100 })}`),
  ]);
  const [quote, card] = await Promise.all([
    transaction.quoteId ? get(`${GRID}/quotes/${id(transaction.quoteId)}`) : undefined,
    transaction.type === 'CARD' && transaction.cardId
      ? get(`${GRID}/cards/${id(transaction.cardId)}`).catch(() => null)
      : undefined,
  ]);
  return { transaction, timeline, quote, card, deliveries };
}

export function TransactionPage({ transactionId }: { transactionId: string }) {
  const loaded = usePoll(() => loadDetail(transactionId), transactionId);
  const d = loaded.data;
  const tx = d?.transaction;
  return (
    <section>
      <DetailHead backTo="transactions" back="All transactions" loaded={loaded}>
        Transaction <code class="id">{transactionId}</code>
      </DetailHead>
      {tx !== undefined && d !== undefined ? (
        <>
          <Fields rows={tx.type === 'CARD' ? cardFields(tx, d.card) : transferFields(tx)} />
          <h2>Status timeline</h2>
          <ol class="timeline" aria-label="Events of this transaction, oldest first">
            {d.timeline.events.length === 0 ? <li>No events recorded.</li> : null}
            {d.timeline.events.map((event: Obj) => (
              <li key={event.id}>
                <Time iso={event.timestamp} /> <Status value={event.data?.status} /> <code>{event.type}</code>
                {event.data?.failureReason ? <span> ({event.data.failureReason})</span> : null}
              </li>
            ))}
          </ol>
          <h2>Money movements</h2>
          <p class="note">
            Every ledger posting of this transaction. Each posting's entries sum to zero; AVAILABLE is an account's
            balance, HELD what is reserved or pending.
          </p>
          <Table
            caption="Postings, oldest first"
            head={['Time', 'Posting', 'Account', 'Bucket', 'Amount']}
            count={d.timeline.movements.length}
            empty="No money has moved."
          >
            {d.timeline.movements.flatMap((posting: Obj) =>
              posting.entries.map((entry: Obj, index: number) => (
                <tr key={`${posting.id}-${index}`} class={index === 0 ? 'group-start' : ''}>
                  <td>{index === 0 ? <Time iso={posting.createdAt} /> : ''}</td>
                  <td>{index === 0 ? posting.kind : ''}</td>
                  <td>
                    {entry.accountKind === 'INTERNAL' ? (
                      <IdLink to={href('accounts', entry.accountId)} value={entry.accountId} />
                    ) : (
                      <span title={entry.accountId}>{entry.accountKind}</span>
                    )}
                  </td>
                  <td>{entry.bucket}</td>
                  <td class="num">{money(entry.amount, entry.currency)}</td>
                </tr>
              )),
            )}
          </Table>
          {d.quote !== undefined ? <QuoteFields quote={d.quote} /> : null}
          <h2>Webhook deliveries</h2>
          <Table
            caption="Deliveries of this transaction's events"
            head={['Created', 'Type', 'Status', 'Tries']}
            count={d.deliveries.data.length}
            empty="No deliveries (is a webhook endpoint set?)."
          >
            {d.deliveries.data.map((delivery) => (
              <tr key={delivery.id}>
                <td>
                  <a href={href('webhooks', delivery.id)}>
                    <Time iso={delivery.createdAt} />
                  </a>
                </td>
                <td>{delivery.type}</td>
                <td>
                  <Status value={delivery.status} />
                </td>
                <td class="num">{delivery.attemptCount}</td>
              </tr>
            ))}
          </Table>
          <Raw value={tx} label="The transaction as the API answers it" />
        </>
      ) : null}
    </section>
  );
}

type FieldRows = [string, ComponentChildren][];

/** The fields of a transfer, a quote's payment or an incoming payment. */
function transferFields(tx: Obj): FieldRows {
  return [
    ['Status', <Status value={tx.status} key="s" />],
    ['Type', tx.type],
    ['Amount', transactionAmount(tx)],
    ...(tx.receivedAmount !== undefined && tx.sentAmount !== undefined
      ? ([['Received', currencyAmount(tx.receivedAmount)]] as [string, string][])
      : []),
    ['Customer', tx.customerId ? <IdLink to={href('customers', tx.customerId)} value={tx.customerId} /> : '—'],
    ['Source', sideLink(tx.source)],
    ['Destination', sideLink(tx.destination)],
    ['Rail', tx.paymentRail ?? '—'],
    ['Reference', tx.reconciliationInstructions?.reference ?? '—'],
    ['Failure reason', tx.failureReason ?? '—'],
    ['Created', <Time iso={tx.createdAt} key="c" />],
    ['Settled', <Time iso={tx.settledAt} key="st" />],
  ];
}

/** The fields of a card transaction: its amounts, its card and its merchant. */
function cardFields(tx: Obj, card: Obj | null | undefined): FieldRows {
  return [
    ['Status', <Status value={tx.status} key="s" />],
    ['Type', `CARD (${tx.direction ?? '—'})`],
    ['Amount', transactionAmount(tx)],
    ['Settled', currencyAmount(tx.settledAmount)],
    ['Refunded', currencyAmount(tx.refundedAmount)],
    [
      'Card',
      <span key="c" title={tx.cardId}>
        {cardLabel(card)}
        {card?.brand ? ` (${card.brand})` : ''}
      </span>,
    ],
    ['Merchant', merchantLabel(tx.merchant)],
    ['Funding account', sideLink({ accountId: tx.accountId })],
    ['Customer', tx.customerId ? <IdLink to={href('customers', tx.customerId)} value={tx.customerId} /> : '—'],
    ['Authorized', <Time iso={tx.authorizedAt} key="a" />],
    ['Last event', <Time iso={tx.lastEventAt} key="l" />],
  ];
}

function sideLink(side: Obj | undefined) {
  const value = endpoint(side);
  if (value === undefined) return '—';
  if (value.startsWith('InternalAccount:')) return <IdLink to={href('accounts', value)} value={value} />;
  return <code class="id">{value}</code>;
}

function QuoteFields({ quote }: { quote: Obj }) {
  return (
    <>
      <h2>Quote</h2>
      <Fields
        rows={[
          [
            'Id',
            <code class="id" key="i">
              {quote.id}
            </code>,
          ],
          ['Status', <Status value={quote.status} key="s" />],
          ['Sending', currencyAmount({ amount: quote.totalSendingAmount, currency: quote.sendingCurrency })],
          ['Receiving', currencyAmount({ amount: quote.totalReceivingAmount, currency: quote.receivingCurrency })],
          ['Exchange rate', quote.exchangeRate ?? '—'],
          ['Fees included', currencyAmount({ amount: quote.feesIncluded, currency: quote.sendingCurrency })],
          ['Expires', <Time iso={quote.expiresAt} key="e" />],
        ]}
      />
    </>
  );
}
