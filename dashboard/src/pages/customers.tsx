// Customers: a searchable live list, and one customer with their KYC/KYB status, accounts and
// documents.

import { useState } from 'preact/hooks';
import { get, GRID, id, type Obj, type Page, query } from '../api.js';
import {
  DetailHead,
  customerName,
  Fields,
  Filters,
  href,
  Id,
  Live,
  PageTitle,
  Raw,
  SelectFilter,
  Status,
  Table,
  TextFilter,
  Time,
  usePoll,
} from '../ui.js';
import { ExternalAccountRow, InternalAccountRow } from './accounts.js';

const LIST_MAX = 100;

/**
 * The newest customers, narrowed by `search` in the browser (name, email, ids, UMA address),
 * plus an exact match the API finds beyond them (a platformCustomerId, a UMA address or an id).
 */
async function searchCustomers(search: string, customerType: string): Promise<Obj[]> {
  const newest = await get<Page>(`${GRID}/customers${query({ limit: LIST_MAX, customerType })}`);
  const term = search.trim();
  if (term === '') return newest.data;
  const lower = term.toLowerCase();
  const matches = newest.data.filter((c) =>
    [customerName(c), c.email, c.id, c.platformCustomerId, c.umaAddress].some((v) =>
      String(v ?? '')
        .toLowerCase()
        .includes(lower),
    ),
  );
  const exact: Obj[] = [];
  if (term.startsWith('Customer:')) {
    try {
      exact.push(await get(`${GRID}/customers/${id(term)}`));
    } catch {
      // Not one of this platform's customers.
    }
  } else {
    const filter = term.startsWith('$') ? { umaAddress: term } : { platformCustomerId: term };
    exact.push(...(await get<Page>(`${GRID}/customers${query({ ...filter, customerType })}`)).data);
  }
  const seen = new Set(matches.map((c) => c.id));
  return [...exact.filter((c) => !seen.has(c.id)), ...matches];
}

export function kycOf(customer: Obj): string | undefined {
  return customer.kycStatus ?? customer.kybStatus;
}

export function CustomersPage({ params }: { params: URLSearchParams }) {
  const [search, setSearch] = useState(params.get('q') ?? '');
  const [customerType, setCustomerType] = useState(params.get('customerType') ?? '');
  const loaded = usePoll(() => searchCustomers(search, customerType), `${search}|${customerType}`);
  return (
    <section>
      <PageTitle
        note={`The ${LIST_MAX} newest customers, searched here by name, email, id or UMA address; an exact platformCustomerId or UMA address is looked up beyond them.`}
      >
        Customers
      </PageTitle>
      <Filters label="Search customers">
        <TextFilter
          label="Search"
          value={search}
          onChange={setSearch}
          placeholder="Name, email, Customer:…, platformCustomerId, $uma@…"
          asTyped
        />
        <SelectFilter
          label="Type"
          value={customerType}
          onChange={setCustomerType}
          options={[
            ['', 'Any'],
            ['INDIVIDUAL', 'Individual'],
            ['BUSINESS', 'Business'],
          ]}
        />
      </Filters>
      <Live loaded={loaded} />
      <Table
        caption="Customers"
        head={['Name', 'Type', 'KYC / KYB', 'Region', 'Platform id', 'Created']}
        count={loaded.data?.length}
        empty="No customers match."
      >
        {(loaded.data ?? []).map((customer) => (
          <tr key={customer.id}>
            <td>
              <a href={href('customers', customer.id)}>{customerName(customer)}</a>
            </td>
            <td>{customer.customerType}</td>
            <td>
              <Status value={kycOf(customer)} />
            </td>
            <td>{customer.region ?? '—'}</td>
            <td>
              <code>{customer.platformCustomerId}</code>
            </td>
            <td>
              <Time iso={customer.createdAt} />
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

async function loadCustomer(customerId: string) {
  const [customer, internal, external, documents] = await Promise.all([
    get(`${GRID}/customers/${id(customerId)}`),
    get<Page>(`${GRID}/customers/internal-accounts${query({ customerId, limit: 100 })}`),
    get<Page>(`${GRID}/customers/external-accounts${query({ customerId, limit: 100 })}`),
    get<Page>(`${GRID}/documents${query({ documentHolder: customerId, limit: 100 })}`),
  ]);
  return { customer, internal: internal.data, external: external.data, documents: documents.data };
}

export function CustomerPage({ customerId }: { customerId: string }) {
  const loaded = usePoll(() => loadCustomer(customerId), customerId);
  const d = loaded.data;
  const c = d?.customer;
  return (
    <section>
      <DetailHead backTo="customers" back="All customers" loaded={loaded}>
        {c !== undefined ? customerName(c) : 'Customer'}
      </DetailHead>
      {c !== undefined && d !== undefined ? (
        <>
          <Fields
            rows={[
              [
                'Id',
                <code class="id" key="i">
                  {c.id}
                </code>,
              ],
              ['Type', c.customerType],
              [c.customerType === 'BUSINESS' ? 'KYB status' : 'KYC status', <Status value={kycOf(c)} key="k" />],
              ['Platform customer id', <code key="p">{c.platformCustomerId}</code>],
              ['Email', c.email ?? '—'],
              ['UMA address', c.umaAddress ? <code>{c.umaAddress}</code> : '—'],
              ['Region', c.region ?? '—'],
              ['Created', <Time iso={c.createdAt} key="c" />],
            ]}
          />
          <p>
            <a href={`${href('transactions')}?customerId=${encodeURIComponent(c.id)}`}>
              Transactions of this customer →
            </a>
          </p>
          <Table
            caption="Internal accounts"
            head={['Account', 'Type', 'Status', 'Balance', 'Total balance']}
            count={d.internal.length}
          >
            {d.internal.map((account) => (
              <InternalAccountRow account={account} key={account.id} />
            ))}
          </Table>
          <Table
            caption="External accounts"
            head={['Account', 'Type', 'Currency', 'Identifier', 'Status']}
            count={d.external.length}
          >
            {d.external.map((account) => (
              <ExternalAccountRow account={account} key={account.id} />
            ))}
          </Table>
          <Table
            caption="Documents"
            head={['Document', 'Type', 'File', 'Country', 'Uploaded']}
            count={d.documents.length}
          >
            {d.documents.map((document) => (
              <tr key={document.id}>
                <td>
                  <Id value={document.id} />
                </td>
                <td>{document.documentType}</td>
                <td>{document.fileName}</td>
                <td>{document.country}</td>
                <td>
                  <Time iso={document.createdAt} />
                </td>
              </tr>
            ))}
          </Table>
          <Raw value={c} label="The customer as the API answers it" />
        </>
      ) : null}
    </section>
  );
}
