// Webhook deliveries: a live list, and one delivery with the request it sends (signature
// header and exact body), every try with its answer, and a Replay button.

import { useState } from 'preact/hooks';
import { ADMIN, type ApiError, get, id, type Obj, type Page, post, query } from '../api.js';
import {
  DetailHead,
  countedCaption,
  Fields,
  Filters,
  href,
  Id,
  Live,
  PageTitle,
  Problem,
  SelectFilter,
  Status,
  Table,
  TextFilter,
  Time,
  usePoll,
} from '../ui.js';

const STATUSES = ['', 'PENDING', 'DELIVERED', 'FAILED'];

export function WebhooksPage({ params }: { params: URLSearchParams }) {
  const [status, setStatus] = useState(params.get('status') ?? '');
  const [type, setType] = useState(params.get('type') ?? '');
  const filters = { status, type: type.trim(), limit: 50 };
  const loaded = usePoll(() => get<Page>(`${ADMIN}/webhooks/deliveries${query(filters)}`), JSON.stringify(filters));
  return (
    <section>
      <PageTitle note="Every event sent to the platform's webhook endpoint, newest first. Set the endpoint with PATCH /config.">
        Webhook deliveries
      </PageTitle>
      <Filters label="Filter deliveries">
        <SelectFilter label="Status" value={status} onChange={setStatus} options={STATUSES} />
        <TextFilter label="Type" value={type} onChange={setType} placeholder="OUTGOING_PAYMENT.COMPLETED" />
      </Filters>
      <Live loaded={loaded} />
      <Table
        caption={countedCaption('Deliveries', loaded.data)}
        head={['Created', 'Type', 'About', 'Status', 'Tries', 'Last try', 'Next try']}
        count={loaded.data?.data.length}
        empty="No deliveries yet."
      >
        {(loaded.data?.data ?? []).map((delivery) => (
          <tr key={delivery.id}>
            <td>
              <a href={href('webhooks', delivery.id)} aria-label={`Delivery ${delivery.type} ${delivery.id}`}>
                <Time iso={delivery.createdAt} />
              </a>
            </td>
            <td>
              <code>{delivery.type}</code>
            </td>
            <td>
              <Id value={delivery.resourceId} />
            </td>
            <td>
              <Status value={delivery.status} />
            </td>
            <td class="num">{delivery.attemptCount}</td>
            <td>
              <Time iso={delivery.lastAttemptAt} />
            </td>
            <td>
              <Time iso={delivery.nextAttemptAt} />
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

async function loadDelivery(deliveryId: string) {
  const [delivery, sent] = await Promise.all([
    get(`${ADMIN}/webhooks/deliveries/${id(deliveryId)}`),
    get(`${ADMIN}/webhooks/deliveries/${id(deliveryId)}/request`),
  ]);
  return { delivery, sent };
}

function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

export function DeliveryPage({ deliveryId }: { deliveryId: string }) {
  const loaded = usePoll(() => loadDelivery(deliveryId), deliveryId);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<Error | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const replay = async () => {
    setBusy(true);
    setMessage(undefined);
    setFailure(undefined);
    try {
      await post(`${ADMIN}/webhooks/deliveries/${id(deliveryId)}/replay`);
      setMessage('Replayed: a new round of tries has started.');
      loaded.reload();
    } catch (err) {
      setFailure(err as ApiError);
    } finally {
      setBusy(false);
    }
  };
  const d = loaded.data?.delivery;
  const sent = loaded.data?.sent;
  const resource: string | undefined = d?.resourceId;
  return (
    <section>
      <DetailHead backTo="webhooks" back="All deliveries" loaded={loaded}>
        Delivery <code class="id">{deliveryId}</code>
      </DetailHead>
      {d !== undefined && sent !== undefined ? (
        <>
          <div class="actions">
            <button type="button" onClick={replay} disabled={busy}>
              {busy ? 'Replaying…' : 'Replay'}
            </button>
            <p aria-live="polite" class="done">
              {message ?? ''}
            </p>
          </div>
          <Problem error={failure} />
          <Fields
            rows={[
              ['Type', <code key="t">{d.type}</code>],
              ['Status', <Status value={d.status} key="s" />],
              [
                'About',
                resource?.startsWith('Transaction:') ? (
                  <a href={href('transactions', resource)}>{resource}</a>
                ) : (
                  <code class="id">{resource}</code>
                ),
              ],
              ['Tries', d.attemptCount],
              ['Created', <Time iso={d.createdAt} key="c" />],
              ['Delivered', <Time iso={d.deliveredAt} key="dl" />],
              ['Next try', <Time iso={d.nextAttemptAt} key="n" />],
            ]}
          />
          <h2>Request</h2>
          <p class="note">
            What each try sends. The signature is made afresh over the same bytes, so it differs from the one a try
            carried and verifies the same way with the platform's public key.
          </p>
          <figure>
            <figcaption class="visually-hidden">Request line and headers</figcaption>
            <pre class="request">
              {`POST ${sent.url ?? '(no webhook endpoint set)'}\n`}
              {Object.entries(sent.headers as Record<string, string>)
                .map(([name, value]) => `${name}: ${value}`)
                .join('\n')}
            </pre>
          </figure>
          <figure>
            <figcaption class="visually-hidden">Request body (shown indented; sent as compact JSON)</figcaption>
            <pre class="request">{prettyBody(sent.body)}</pre>
          </figure>
          <h2>Tries</h2>
          <Table
            caption="Every try, oldest first"
            head={['#', 'Trigger', 'Started', 'URL', 'Outcome', 'Answer', 'Latency']}
            count={d.attempts.length}
            empty="No try yet."
          >
            {d.attempts.map((attempt: Obj) => (
              <tr key={attempt.number}>
                <td class="num">{attempt.number}</td>
                <td>{attempt.trigger}</td>
                <td>
                  <Time iso={attempt.startedAt} />
                </td>
                <td class="wrap">{attempt.url ?? '—'}</td>
                <td>
                  <Status value={attempt.outcome} />
                </td>
                <td class="wrap">
                  {attempt.responseStatus !== undefined ? <strong>{attempt.responseStatus}</strong> : null}{' '}
                  {attempt.responseExcerpt ?? attempt.error ?? ''}
                </td>
                <td class="num">{attempt.latencyMs} ms</td>
              </tr>
            ))}
          </Table>
        </>
      ) : null}
    </section>
  );
}
