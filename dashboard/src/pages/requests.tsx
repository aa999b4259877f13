// The request journal: what the app sent to the Grid API and how railyard answered, live and
// filterable; one request with its bodies; and the integration report that sums the journal up.
// The dashboard's own requests carry X-Railyard-Journal: off (api.ts), so they are not in it.

import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ADMIN, get, id, type Obj, type Page, query } from '../api.js';
import { when } from '../format.js';
import { Fields, href, Id, IdLink, Live, PageTitle, Problem, Status, Table, Time, usePoll } from '../ui.js';

/** A time on the server's clock (the journal's receivedAt), which the sandbox clock may be ahead of. */
function ServerTime({ iso }: { iso: string | undefined }) {
  if (!iso) return <span>—</span>;
  return (
    <time dateTime={iso} title={`${iso} (server clock, UTC)`}>
      {when(iso)}
    </time>
  );
}

/** The status of a request's answer, or that none reached the app. */
function Answer({ request }: { request: Obj }) {
  const status = request.status as number | undefined;
  const tone = status === undefined ? 'bad' : status >= 500 || status === 429 ? 'bad' : status >= 400 ? 'wait' : 'good';
  return (
    <span class={`status ${request.answered === false ? 'bad' : tone}`}>
      {status ?? '—'}
      {request.answered === false ? ' no answer' : ''}
    </span>
  );
}

function Filter({
  label,
  value,
  onChange,
  placeholder,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  placeholder: string;
}) {
  return (
    <label>
      {label}
      <input
        value={value}
        onChange={(e) => onChange(e.currentTarget.value.trim())}
        placeholder={placeholder}
        spellcheck={false}
      />
    </label>
  );
}

export function RequestsPage({ params }: { params: URLSearchParams }) {
  const [operationId, setOperationId] = useState(params.get('operationId') ?? '');
  const [status, setStatus] = useState(params.get('status') ?? '');
  const [code, setCode] = useState(params.get('code') ?? '');
  const [idempotencyKey, setIdempotencyKey] = useState(params.get('idempotencyKey') ?? '');
  const filters = { operationId, status, code, idempotencyKey, limit: 50 };
  const loaded = usePoll(() => get<Page>(`${ADMIN}/requests${query(filters)}`), JSON.stringify(filters));
  return (
    <section>
      <PageTitle note="What the app sent to the Grid API and how railyard answered, newest first. Secrets in the bodies are redacted.">
        Requests
      </PageTitle>
      <p>
        <a href={href('requests', 'report')}>Integration report</a>: answers per operation, and what the integration
        should look at.
      </p>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter requests">
        <Filter label="Operation" value={operationId} onChange={setOperationId} placeholder="createTransferOut" />
        <Filter label="Status" value={status} onChange={setStatus} placeholder="400" />
        <Filter label="Error code" value={code} onChange={setCode} placeholder="INVALID_INPUT" />
        <Filter label="Idempotency-Key" value={idempotencyKey} onChange={setIdempotencyKey} placeholder="payout-42" />
      </form>
      <Live loaded={loaded} />
      <Problem error={loaded.error} />
      <Table
        caption={`Requests${loaded.data?.totalCount !== undefined ? ` (${loaded.data.totalCount})` : ''}`}
        head={['Received', 'Operation', 'Status', 'Error code', 'Idempotency-Key', 'Duration']}
        count={loaded.data?.data.length}
        empty="No request yet."
      >
        {(loaded.data?.data ?? []).map((request) => (
          <tr key={request.id}>
            <td>
              <a
                href={href('requests', request.id)}
                aria-label={`Request ${request.method} ${request.operationId ?? request.path} ${request.id}`}
              >
                <ServerTime iso={request.receivedAt} />
              </a>
            </td>
            <td class="wrap">
              <code>{request.operationId ?? '—'}</code>
              <br />
              <small>
                {request.method} {request.path}
              </small>
            </td>
            <td>
              <Answer request={request} />
            </td>
            <td>{request.errorCode ? <code>{request.errorCode}</code> : '—'}</td>
            <td class="wrap">{request.idempotencyKey ? <code>{request.idempotencyKey}</code> : '—'}</td>
            <td class="num">{Number(request.durationMs).toFixed(1)} ms</td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

function Body({ label, value }: { label: string; value: unknown }) {
  return (
    <figure>
      <figcaption>{label}</figcaption>
      <pre class="request">{value === undefined ? '(none)' : JSON.stringify(value, null, 2)}</pre>
    </figure>
  );
}

export function RequestPage({ requestId }: { requestId: string }) {
  const loaded = usePoll(() => get(`${ADMIN}/requests/${id(requestId)}`), requestId, 0);
  const r = loaded.data;
  return (
    <section>
      <PageTitle>
        Request <code class="id">{requestId}</code>
      </PageTitle>
      <p>
        <a href={href('requests')}>← All requests</a>
      </p>
      <Problem error={loaded.error} />
      {r !== undefined ? (
        <>
          <Fields
            rows={[
              ['Request', <code key="m">{`${r.method} ${r.path}`}</code>],
              ['Operation', r.operationId ? <code key="o">{r.operationId}</code> : '—'],
              ['Status', <Answer request={r} key="s" />],
              ['Error code', r.errorCode ? <code key="c">{r.errorCode}</code> : '—'],
              ['Duration', `${Number(r.durationMs).toFixed(1)} ms`],
              ['Received (server clock)', <ServerTime iso={r.receivedAt} key="r" />],
              ['Sandbox time', <Time iso={r.sandboxTime} key="t" />],
              ['Request id (X-Request-Id)', <code key="i">{r.requestId}</code>],
              [
                'Idempotency-Key',
                r.idempotencyKey ? (
                  <a key="k" href={`#/requests?idempotencyKey=${encodeURIComponent(r.idempotencyKey)}`}>
                    <code>{r.idempotencyKey}</code>
                  </a>
                ) : (
                  '—'
                ),
              ],
              ['Sent by', r.agentId ? <Id value={r.agentId} key="a" /> : <Id value={r.tokenId} key="a" />],
              [
                'Fault rule',
                r.fault ? (
                  <span key="f">
                    <code>{r.fault.ruleId}</code> {r.fault.effect}
                    {r.fault.value !== undefined ? ` ${r.fault.value}` : ''}
                  </span>
                ) : (
                  '—'
                ),
              ],
            ]}
          />
          <h2>Bodies</h2>
          <p class="note">
            As sent and answered, with secrets (client secrets, one-time codes, keys, card details) redacted.
          </p>
          <Body label="Request body" value={r.requestBody} />
          <Body label="Response body" value={r.responseBody} />
        </>
      ) : null}
    </section>
  );
}

const RETRY: Record<string, string> = {
  SAME_KEY: 'retried with the same key',
  NEW_KEY: 'sent again with a new key',
  NO_KEY: 'sent again without a key',
  NOT_RETRIED: 'not retried',
};

function Finding({ title, note, children }: { title: string; note: string; children: ComponentChildren }) {
  return (
    <>
      <h2>{title}</h2>
      <p class="note">{note}</p>
      {children}
    </>
  );
}

function RequestLinks({ ids }: { ids: string[] }) {
  return (
    <>
      {ids.map((requestId, i) => (
        <span key={requestId}>
          {i > 0 ? ', ' : ''}
          <IdLink to={href('requests', requestId)} value={requestId} />
        </span>
      ))}
    </>
  );
}

function counts(record: Record<string, number>): string {
  const entries = Object.entries(record);
  return entries.length === 0 ? '—' : entries.map(([key, n]) => `${key} × ${n}`).join(', ');
}

export function ReportPage() {
  const loaded = usePoll(() => get(`${ADMIN}/requests/report`), 'report');
  const report = loaded.data;
  return (
    <section>
      <PageTitle note="The request journal summed up: how each operation was answered, and what in the app's requests and webhook endpoint deserves a look.">
        Integration report
      </PageTitle>
      <p>
        <a href={href('requests')}>← All requests</a>
      </p>
      <Live loaded={loaded} />
      <Problem error={loaded.error} />
      {report !== undefined ? (
        <>
          <p>
            {report.window.requests} requests in the journal (it keeps each platform's latest{' '}
            {report.window.size.toLocaleString()})
            {report.window.firstReceivedAt ? (
              <>
                , from <ServerTime iso={report.window.firstReceivedAt} /> to{' '}
                <ServerTime iso={report.window.lastReceivedAt} />
              </>
            ) : null}
            .
          </p>
          <Table
            caption="Answers per operation"
            head={['Operation', 'Requests', 'By status', 'By error code', 'No answer']}
            count={report.operations.length}
            empty="No request yet."
          >
            {report.operations.map((o: Obj) => (
              <tr key={o.operationId}>
                <td>
                  <a href={`#/requests?operationId=${encodeURIComponent(o.operationId)}`}>
                    <code>{o.operationId}</code>
                  </a>
                </td>
                <td class="num">{o.requests}</td>
                <td>{counts(o.byStatus)}</td>
                <td class="wrap">{counts(o.byCode)}</td>
                <td class="num">{o.unanswered}</td>
              </tr>
            ))}
          </Table>
          <Finding
            title="Money moved without an Idempotency-Key"
            note="A retry of one of these after a timeout could move the money twice: send an Idempotency-Key with every payment."
          >
            <Table
              caption="Payments sent without an Idempotency-Key"
              head={['Operation', 'Requests', 'Latest']}
              count={report.missingIdempotencyKeys.length}
              empty="None: every payment carried a key."
            >
              {report.missingIdempotencyKeys.map((f: Obj) => (
                <tr key={f.operationId}>
                  <td>
                    <code>{f.operationId}</code>
                  </td>
                  <td class="num">{f.requests}</td>
                  <td class="wrap">
                    <RequestLinks ids={f.requestIds} />
                  </td>
                </tr>
              ))}
            </Table>
          </Finding>
          <Finding
            title="Idempotency-Keys reused with another request"
            note="A key names one request: sending it again with another body or path is refused, and usually means keys are drawn wrongly."
          >
            <Table
              caption="Keys sent with different requests"
              head={['Operation', 'Idempotency-Key', 'Requests', 'Different requests', 'Requests sent']}
              count={report.reusedIdempotencyKeys.length}
              empty="None."
            >
              {report.reusedIdempotencyKeys.map((f: Obj) => (
                <tr key={`${f.operationId} ${f.idempotencyKey}`}>
                  <td>
                    <code>{f.operationId}</code>
                  </td>
                  <td class="wrap">
                    <code>{f.idempotencyKey}</code>
                  </td>
                  <td class="num">{f.requests}</td>
                  <td class="num">{f.distinctRequests}</td>
                  <td class="wrap">
                    <RequestLinks ids={f.requestIds} />
                  </td>
                </tr>
              ))}
            </Table>
          </Finding>
          <Finding
            title="Failed answers and what came next"
            note="Answers of 5xx or 429, and requests left without an answer. A safe retry sends the same request with the same key."
          >
            <Table
              caption="Failed answers"
              head={['Received', 'Operation', 'Status', 'Idempotency-Key', 'Then']}
              count={report.failedAnswers.length}
              empty="None."
            >
              {report.failedAnswers.map((f: Obj) => (
                <tr key={f.requestId}>
                  <td>
                    <a href={href('requests', f.requestId)} aria-label={`Failed request ${f.requestId}`}>
                      <ServerTime iso={f.receivedAt} />
                    </a>
                  </td>
                  <td>
                    <code>{f.operationId ?? f.path}</code>
                  </td>
                  <td>
                    <Answer request={f} />
                  </td>
                  <td class="wrap">{f.idempotencyKey ? <code>{f.idempotencyKey}</code> : '—'}</td>
                  <td>
                    {RETRY[f.retry] ?? f.retry}
                    {f.retryRequestId ? (
                      <>
                        {' '}
                        (<IdLink to={href('requests', f.retryRequestId)} value={f.retryRequestId} />)
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </Table>
          </Finding>
          <Finding
            title="Webhooks the endpoint failed"
            note="Deliveries whose latest try the platform's endpoint did not accept, with its answer."
          >
            <Table
              caption="Failed webhook deliveries"
              head={['Type', 'Status', 'Tries', 'Last try', 'Answer']}
              count={report.failedWebhookDeliveries.length}
              empty="None."
            >
              {report.failedWebhookDeliveries.map((d: Obj) => (
                <tr key={d.deliveryId}>
                  <td>
                    <a href={href('webhooks', d.deliveryId)}>
                      <code>{d.type}</code>
                    </a>
                  </td>
                  <td>
                    <Status value={d.status} />
                  </td>
                  <td class="num">{d.attemptCount}</td>
                  <td>
                    <Time iso={d.lastAttempt.startedAt} />
                  </td>
                  <td class="wrap">
                    {d.lastAttempt.responseStatus !== undefined ? (
                      <strong>{d.lastAttempt.responseStatus}</strong>
                    ) : null}{' '}
                    {d.lastAttempt.responseExcerpt ?? d.lastAttempt.error ?? ''}
                  </td>
                </tr>
              ))}
            </Table>
          </Finding>
        </>
      ) : null}
    </section>
  );
}
