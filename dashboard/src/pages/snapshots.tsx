// Snapshots of the platform (docs/snapshots.md): save its whole state under a name, bring it
// back, delete. SnapshotsPanel is the part the Testing page places (testing.tsx).

import { useState } from 'preact/hooks';
import { ADMIN, get, id, type Obj, post, request } from '../api.js';
import { when } from '../format.js';
import { Problem, Table, Time, usePoll } from '../ui.js';

const NAME_PATTERN = '[A-Za-z0-9][A-Za-z0-9._\\-]{0,63}';

const rowsIn = (snapshot: Obj) => Object.values(snapshot.rows as Record<string, number>).reduce((a, b) => a + b, 0);

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * The platform's snapshots: a form to save one, and each one's restore and delete, under the
 * heading `heading`. `onRestored`: called after a restore (the sandbox clock moved).
 */
export function SnapshotsPanel({ heading = 'Snapshots', onRestored }: { heading?: string; onRestored?: () => void }) {
  const loaded = usePoll(() => get<{ data: Obj[] }>(`${ADMIN}/snapshots`), 'snapshots', 5_000);
  const [name, setName] = useState('');
  const [replace, setReplace] = useState(false);
  const [busy, setBusy] = useState<string | undefined>(undefined);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<Error | undefined>(undefined);

  const act = async (what: string, work: () => Promise<string>) => {
    setBusy(what);
    setFailure(undefined);
    setMessage(undefined);
    try {
      setMessage(await work());
      loaded.reload();
    } catch (err) {
      setFailure(err as Error);
    } finally {
      setBusy(undefined);
    }
  };

  const save = (e: Event) => {
    e.preventDefault();
    const wanted = name.trim();
    void act('save', async () => {
      const saved = await post(`${ADMIN}/snapshots`, { name: wanted, ...(replace ? { replace: true } : {}) });
      setName('');
      return `Saved ${saved.name}: ${rowsIn(saved)} rows, at sandbox time ${when(saved.createdAt)}.`;
    });
  };

  const restore = (snapshot: Obj) =>
    act(`restore ${snapshot.name}`, async () => {
      const result = await post(`${ADMIN}/snapshots/${id(snapshot.name)}/restore`);
      onRestored?.();
      return `Restored ${result.name}: ${rowsIn({ rows: result.restored })} rows put back; the sandbox clock reads ${when(result.clock.now)}.`;
    });

  const remove = (snapshot: Obj) =>
    act(`delete ${snapshot.name}`, async () => {
      await request('DELETE', `${ADMIN}/snapshots/${id(snapshot.name)}`);
      return `Deleted ${snapshot.name}.`;
    });

  const snapshots = loaded.data?.data;
  return (
    <section aria-labelledby="snapshots-heading">
      <h2 id="snapshots-heading">{heading}</h2>
      <p class="note">
        A snapshot holds the platform's whole state: every resource, the ledger, events and webhook deliveries, jobs
        due, the sandbox clock and the configuration. Restoring brings exactly that back; credentials stay those of now.
        Saving, restoring and deleting need a <code>MANAGE</code> token.
      </p>
      <form class="filters" onSubmit={save} aria-label="Save a snapshot">
        <label>
          Name
          <input
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            pattern={NAME_PATTERN}
            title='Letters, digits, ".", "_" and "-", starting with a letter or digit; at most 64 characters'
            required
            spellcheck={false}
          />
        </label>
        <label class="check">
          <input type="checkbox" checked={replace} onChange={(e) => setReplace(e.currentTarget.checked)} />
          Replace one of that name
        </label>
        <button type="submit" disabled={busy !== undefined}>
          {busy === 'save' ? 'Saving…' : 'Save snapshot'}
        </button>
      </form>
      <p aria-live="polite" class="done">
        {message ?? ''}
      </p>
      <Problem error={failure ?? loaded.error} />
      <Table
        caption="Saved snapshots, the latest first"
        head={['Name', 'Sandbox time', 'Rows', 'Size', 'Actions']}
        count={snapshots?.length}
        empty="No snapshot yet."
      >
        {(snapshots ?? []).map((snapshot) => (
          <tr key={snapshot.name}>
            <td>
              <code>{snapshot.name}</code>
            </td>
            <td>
              <Time iso={snapshot.createdAt} />
            </td>
            <td class="num">{rowsIn(snapshot)}</td>
            <td class="num">{size(snapshot.sizeBytes)}</td>
            <td>
              <div class="decision">
                <button
                  type="button"
                  aria-label={`Restore ${snapshot.name}`}
                  disabled={busy !== undefined}
                  onClick={() => void restore(snapshot)}
                >
                  {busy === `restore ${snapshot.name}` ? 'Restoring…' : 'Restore'}
                </button>
                <button
                  type="button"
                  class="danger"
                  aria-label={`Delete ${snapshot.name}`}
                  disabled={busy !== undefined}
                  onClick={() => void remove(snapshot)}
                >
                  Delete
                </button>
              </div>
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}
