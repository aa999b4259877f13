// Agents and their pending approvals, cards, and stablecoin operations.

import { useState } from 'preact/hooks';
import { get, GRID, id, type Obj, type Page, post, query } from '../api.js';
import { currencyAmount, money } from '../format.js';
import {
  href,
  Id,
  IdLink,
  Live,
  Owner,
  PageTitle,
  Problem,
  Status,
  Table,
  Time,
  useCustomerNames,
  usePoll,
} from '../ui.js';

function actionAmount(action: Obj): string {
  if (action.transferDetails !== undefined)
    return money(action.transferDetails.amount, action.transferDetails.currency);
  if (action.quote !== undefined)
    return currencyAmount({ amount: action.quote.totalSendingAmount, currency: action.quote.sendingCurrency });
  return '—';
}

async function loadAgents() {
  const [agents, approvals] = await Promise.all([
    get<Page>(`${GRID}/agents${query({ limit: 100 })}`),
    get<Page>(`${GRID}/agents/approvals${query({ limit: 100 })}`),
  ]);
  return { agents: agents.data, approvals: approvals.data };
}

export function AgentsPage() {
  const loaded = usePoll(loadAgents, 'agents');
  const customers = useCustomerNames();
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<Error | undefined>(undefined);
  const [busy, setBusy] = useState<string | undefined>(undefined);
  const names = new Map((loaded.data?.agents ?? []).map((a) => [a.id, a.name as string]));

  const decide = async (action: Obj, decision: 'approve' | 'reject') => {
    setBusy(action.id);
    setFailure(undefined);
    setMessage(undefined);
    try {
      const path = `${GRID}/agents/${id(action.agentId)}/actions/${id(action.id)}/${decision}`;
      const reason = reasons[action.id]?.trim();
      const answered = await post(path, decision === 'reject' && reason ? { reason } : undefined);
      setMessage(`Action ${action.id} is now ${answered.status}.`);
      loaded.reload();
    } catch (err) {
      setFailure(err as Error);
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <section>
      <PageTitle note="Agents act for one customer within a policy; actions over its thresholds wait here for the platform's decision.">
        Agents
      </PageTitle>
      <Live loaded={loaded} />
      <h2>Pending approvals</h2>
      <p aria-live="polite" class="done">
        {message ?? ''}
      </p>
      <Problem error={failure} />
      <Table
        caption="Actions waiting for approval"
        head={['Submitted', 'Agent', 'Customer', 'Action', 'Amount', 'Decision']}
        count={loaded.data?.approvals.length}
        empty="No action is waiting."
      >
        {(loaded.data?.approvals ?? []).map((action) => (
          <tr key={action.id}>
            <td>
              <Time iso={action.createdAt} />
            </td>
            <td title={action.agentId}>{names.get(action.agentId) ?? action.agentId}</td>
            <td>
              <Owner id={action.customerId} names={customers} />
            </td>
            <td>{action.type}</td>
            <td class="num">{actionAmount(action)}</td>
            <td>
              <div class="decision">
                <button type="button" disabled={busy === action.id} onClick={() => void decide(action, 'approve')}>
                  Approve
                </button>
                <label class="inline">
                  <span class="visually-hidden">Reason to reject {action.id}</span>
                  <input
                    value={reasons[action.id] ?? ''}
                    placeholder="Reason (optional)"
                    onInput={(e) => setReasons({ ...reasons, [action.id]: e.currentTarget.value })}
                  />
                </label>
                <button
                  type="button"
                  class="danger"
                  disabled={busy === action.id}
                  onClick={() => void decide(action, 'reject')}
                >
                  Reject
                </button>
              </div>
            </td>
          </tr>
        ))}
      </Table>
      <h2>Agents</h2>
      <Table
        caption="Agents"
        head={['Name', 'Customer', 'Connected', 'Paused', 'Mode', 'Created']}
        count={loaded.data?.agents.length}
        empty="No agents."
      >
        {(loaded.data?.agents ?? []).map((agent) => (
          <tr key={agent.id}>
            <td title={agent.id}>{agent.name}</td>
            <td>
              <Owner id={agent.customerId} names={customers} />
            </td>
            <td>{agent.isConnected ? 'yes' : 'no'}</td>
            <td>{agent.isPaused ? 'yes' : 'no'}</td>
            <td>{agent.policy?.defaultExecutionMode ?? '—'}</td>
            <td>
              <Time iso={agent.createdAt} />
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

export function CardsPage() {
  const loaded = usePoll(() => get<Page>(`${GRID}/cards${query({ limit: 100 })}`), 'cards');
  const customers = useCustomerNames();
  return (
    <section>
      <PageTitle note="Virtual cards issued to customers. Their transactions (type CARD) are listed under Transactions by funding account.">
        Cards
      </PageTitle>
      <Live loaded={loaded} />
      <Table
        caption="Cards"
        head={['Card', 'Last 4', 'Cardholder', 'State', 'Currency', 'Funding sources', 'Transactions', 'Created']}
        count={loaded.data?.data.length}
        empty="No cards."
      >
        {(loaded.data?.data ?? []).map((card) => (
          <tr key={card.id}>
            <td>
              <Id value={card.id} />
            </td>
            <td>{card.last4 ?? '—'}</td>
            <td>
              <Owner id={card.cardholderId} names={customers} />
            </td>
            <td>
              <Status value={card.state} /> {card.stateReason ? <small>{card.stateReason}</small> : null}
            </td>
            <td>{card.currency ?? '—'}</td>
            <td>
              {(card.fundingSources as string[]).map((source) => (
                <IdLink key={source} to={href('accounts', source)} value={source} />
              ))}
            </td>
            <td>
              {(card.fundingSources as string[]).slice(0, 1).map((source) => (
                <a key={source} href={`${href('transactions')}?accountIdentifier=${encodeURIComponent(source)}`}>
                  Card transactions
                </a>
              ))}
            </td>
            <td>
              <Time iso={card.createdAt} />
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

async function loadStablecoins() {
  const [links, coins] = await Promise.all([
    get<Page>(`${GRID}/stablecoin-provider-accounts${query({ limit: 100 })}`),
    get<Page>(`${GRID}/stablecoins${query({ limit: 100 })}`),
  ]);
  const operations = await Promise.all(
    coins.data.map(async (coin) => ({
      coin,
      operations: (await get<Page>(`${GRID}/stablecoins/${id(coin.id)}/operations${query({ limit: 20 })}`)).data,
    })),
  );
  return { links: links.data, coins: coins.data, operations };
}

export function StablecoinsPage() {
  const loaded = usePoll(loadStablecoins, 'stablecoins', 3000);
  return (
    <section>
      <PageTitle note="Provider links, the stablecoins registered through them, and their mints and burns (amounts in whole tokens).">
        Stablecoins
      </PageTitle>
      <Live loaded={loaded} />
      <Table
        caption="Provider links"
        head={['Link', 'Provider', 'Provider account', 'Status', 'Created']}
        count={loaded.data?.links.length}
        empty="No provider links."
      >
        {(loaded.data?.links ?? []).map((link) => (
          <tr key={link.id}>
            <td>
              <Id value={link.id} />
            </td>
            <td>{link.provider}</td>
            <td>
              <code>{link.providerAccountId}</code>
            </td>
            <td>
              <Status value={link.status} />
            </td>
            <td>
              <Time iso={link.createdAt} />
            </td>
          </tr>
        ))}
      </Table>
      <Table
        caption="Stablecoins"
        head={['Symbol', 'Stablecoin', 'Issuance', 'Grid operations', 'Base currency', 'Created']}
        count={loaded.data?.coins.length}
        empty="No stablecoins."
      >
        {(loaded.data?.coins ?? []).map((coin) => (
          <tr key={coin.id}>
            <td>{coin.symbol}</td>
            <td>
              <Id value={coin.id} />
            </td>
            <td>
              <Status value={coin.issuanceStatus} />
            </td>
            <td>
              <Status value={coin.gridOperationsStatus} />
            </td>
            <td>{coin.baseCurrency}</td>
            <td>
              <Time iso={coin.createdAt} />
            </td>
          </tr>
        ))}
      </Table>
      {(loaded.data?.operations ?? []).map(({ coin, operations }) => (
        <Table
          key={coin.id}
          caption={`Mints and burns of ${coin.symbol}`}
          head={['Created', 'Operation', 'Type', 'Status', 'Amount', 'Failure']}
          count={operations.length}
          empty="No operations."
        >
          {operations.map((operation) => (
            <tr key={operation.id}>
              <td>
                <Time iso={operation.createdAt} />
              </td>
              <td>
                <Id value={operation.id} />
              </td>
              <td>{operation.operationType}</td>
              <td>
                <Status value={operation.status} />
              </td>
              <td class="num">{money(operation.amount, coin.symbol, coin.decimals)}</td>
              <td>{operation.failureReason ?? ''}</td>
            </tr>
          ))}
        </Table>
      ))}
    </section>
  );
}
