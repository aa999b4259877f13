// Internal accounts with their balances and the ledger postings behind them, and external
// accounts.

import { useState } from 'preact/hooks';
import { ADMIN, get, GRID, id, type Obj, type Page, query } from '../api.js';
import { currencyAmount, money } from '../format.js';
import {
  DetailHead,
  Fields,
  href,
  Id,
  IdLink,
  Live,
  Owner,
  PageTitle,
  Status,
  Table,
  Time,
  useCustomerNames,
  usePoll,
} from '../ui.js';

/** The identifier an external account's sandbox outcome reads (its last three characters). */
export function externalIdentifier(account: Obj): string {
  const info = account.accountInfo ?? {};
  return (
    info.accountNumber ??
    info.iban ??
    info.clabeNumber ??
    info.address ??
    info.phoneNumber ??
    info.umaAddress ??
    info.email ??
    info.pixKey ??
    info.upiId ??
    '—'
  );
}

/**
 * An internal account in a table: Account, Owner (when `names` is given: a list of every
 * owner's accounts), Type, Status, Balance, Total balance.
 */
export function InternalAccountRow({ account, names }: { account: Obj; names?: Map<string, string> }) {
  return (
    <tr>
      <td>
        <IdLink to={href('accounts', account.id)} value={account.id} />
      </td>
      {names !== undefined ? (
        <td>
          <Owner id={account.customerId} names={names} />
        </td>
      ) : null}
      <td>{account.type}</td>
      <td>
        <Status value={account.status} />
      </td>
      <td class="num">{currencyAmount(account.balance)}</td>
      <td class="num">{currencyAmount(account.totalBalance)}</td>
    </tr>
  );
}

/**
 * An external account in a table: Account, Owner (when `names` is given), Type, Currency,
 * Identifier, Beneficiary (with the owner), Status.
 */
export function ExternalAccountRow({ account, names }: { account: Obj; names?: Map<string, string> }) {
  const beneficiary = account.accountInfo?.beneficiary;
  return (
    <tr>
      <td>
        <Id value={account.id} />
      </td>
      {names !== undefined ? (
        <td>
          <Owner id={account.customerId} names={names} />
        </td>
      ) : null}
      <td>{account.accountInfo?.accountType}</td>
      <td>{account.currency}</td>
      <td>
        <code>{externalIdentifier(account)}</code>
      </td>
      {names !== undefined ? <td>{beneficiary?.fullName ?? beneficiary?.legalName ?? '—'}</td> : null}
      <td>
        <Status value={account.status} />
      </td>
    </tr>
  );
}

async function loadInternal() {
  const [platform, customers] = await Promise.all([
    get<Page>(`${GRID}/platform/internal-accounts`),
    get<Page>(`${GRID}/customers/internal-accounts${query({ limit: 100 })}`),
  ]);
  return { platform: platform.data, customers: customers.data, more: customers.hasMore };
}

export function InternalAccountsPage() {
  const loaded = usePoll(loadInternal, 'internal');
  const names = useCustomerNames();
  const rows = [...(loaded.data?.platform ?? []), ...(loaded.data?.customers ?? [])];
  return (
    <section>
      <PageTitle note="Balance is what an account can spend now; total balance adds what is held for payouts in flight and incoming payments not yet settled. Open an account for the ledger postings behind its balances.">
        Internal accounts
      </PageTitle>
      <Live loaded={loaded} />
      <Table
        caption={`Internal accounts: the platform's, then customers'${loaded.data?.more ? ' (the 100 newest)' : ''}`}
        head={['Account', 'Owner', 'Type', 'Status', 'Balance', 'Total balance']}
        count={loaded.data === undefined ? undefined : rows.length}
      >
        {rows.map((account) => (
          <InternalAccountRow account={account} names={names} key={account.id} />
        ))}
      </Table>
    </section>
  );
}

export function AccountPage({ accountId }: { accountId: string }) {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const loaded = usePoll(
    () => get(`${ADMIN}/internal-accounts/${id(accountId)}/entries${query({ limit: 50, cursor })}`),
    `${accountId}|${cursor ?? ''}`,
  );
  const d = loaded.data;
  return (
    <section>
      <DetailHead backTo="accounts" back="All internal accounts" loaded={loaded}>
        Internal account <code class="id">{accountId}</code>
      </DetailHead>
      {d !== undefined ? (
        <>
          <Fields
            rows={[
              ['Balance (available)', money(d.available, d.currency)],
              ['Held', money(d.held, d.currency)],
              ['Total balance', money(d.available + d.held, d.currency)],
              ['Postings', d.totalCount],
            ]}
          />
          <p>
            <a href={`${href('transactions')}?accountIdentifier=${encodeURIComponent(accountId)}`}>
              Transactions of this account →
            </a>
          </p>
          <Table
            caption="Ledger postings behind the balances, newest first"
            head={['Time', 'Posting', 'Balance change', 'Held change', 'Transaction']}
            count={d.data.length}
            empty="No money has moved on this account."
          >
            {d.data.map((posting: Obj) => (
              <tr key={posting.postingId}>
                <td>
                  <Time iso={posting.createdAt} />
                </td>
                <td title={posting.postingId}>{posting.kind}</td>
                <td class="num">{posting.availableChange === 0 ? '' : money(posting.availableChange, d.currency)}</td>
                <td class="num">{posting.heldChange === 0 ? '' : money(posting.heldChange, d.currency)}</td>
                <td>
                  {posting.transactionId ? (
                    <IdLink to={href('transactions', posting.transactionId)} value={posting.transactionId} />
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            ))}
          </Table>
          <div class="actions">
            {cursor !== undefined ? (
              <button type="button" class="secondary" onClick={() => setCursor(undefined)}>
                Newest
              </button>
            ) : null}
            {d.hasMore ? (
              <button type="button" class="secondary" onClick={() => setCursor(d.nextCursor)}>
                Older postings
              </button>
            ) : null}
          </div>
        </>
      ) : null}
    </section>
  );
}

async function loadExternal() {
  const [platform, customers] = await Promise.all([
    get<Page>(`${GRID}/platform/external-accounts${query({ limit: 100 })}`),
    get<Page>(`${GRID}/customers/external-accounts${query({ limit: 100 })}`),
  ]);
  return [...platform.data, ...customers.data];
}

export function ExternalAccountsPage() {
  const loaded = usePoll(loadExternal, 'external');
  const names = useCustomerNames();
  return (
    <section>
      <PageTitle note="Bank accounts and wallets money goes to and comes from. The last three characters of the identifier choose the sandbox outcome of a payment.">
        External accounts
      </PageTitle>
      <Live loaded={loaded} />
      <Table
        caption="External accounts: the platform's, then customers'"
        head={['Account', 'Owner', 'Type', 'Currency', 'Identifier', 'Beneficiary', 'Status']}
        count={loaded.data?.length}
      >
        {(loaded.data ?? []).map((account) => (
          <ExternalAccountRow account={account} names={names} key={account.id} />
        ))}
      </Table>
    </section>
  );
}
