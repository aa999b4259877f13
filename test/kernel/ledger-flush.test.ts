// The ledger's last line of defence: Books checks a posting against the balance it read, and
// flush() writes the change as a guarded increment. When another transaction changed the
// balance in between (simulated here by a write in the same transaction, on either store),
// the write refuses what no longer fits, and keeps what still fits with the real balance.

import { describe, expect, it } from 'vitest';
import type { Tx } from '../../src/db/index.js';
import { BalanceLimitExceeded, BALANCE_MAX, InsufficientFunds, openBooks } from '../../src/ledger/index.js';
import { build } from '../helper.js';
import { balances, fundedUsd } from '../fixtures/money.js';

async function setAvailable(tx: Tx, id: string, available: bigint) {
  await tx
    .updateTable('ledger_accounts')
    .set({ available: available.toString() as never })
    .where('id', '=', id)
    .execute();
}

/** What the transaction threw (undefined if it committed). */
function refusalOf(transaction: Promise<unknown>): Promise<unknown> {
  return transaction.then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe('Books.flush against a balance changed since it was read', () => {
  it('refuses a hold the balance no longer covers, with the balance as it is', async () => {
    const t = await build();
    const account = await fundedUsd(t, 1_000);
    const refusal = await refusalOf(
      t.deps.db.transaction(async (tx) => {
        const books = openBooks(tx, t.platformId, new Date());
        await books.hold(account.id, 'USD', 800n, 'Transaction:test');
        await setAvailable(tx, account.id, 100n); // spent elsewhere meanwhile
        await books.flush();
      }),
    );
    expect(refusal).toBeInstanceOf(InsufficientFunds);
    expect(refusal).toMatchObject({ accountId: account.id, available: 100n, amount: 800n });
    // The transaction rolled back: the spend of the simulation is gone too.
    expect(await balances(t, account.id)).toEqual({ balance: 1_000, totalBalance: 1_000 });
  });

  it('refuses a credit that would now pass the maximum', async () => {
    const t = await build();
    const account = await fundedUsd(t, 1_000);
    const refusal = await refusalOf(
      t.deps.db.transaction(async (tx) => {
        const books = openBooks(tx, t.platformId, new Date());
        await books.fund(account.id, 'USD', 500n);
        await setAvailable(tx, account.id, BALANCE_MAX - 100n);
        await books.flush();
      }),
    );
    expect(refusal).toBeInstanceOf(BalanceLimitExceeded);
  });

  it('writes a change that still fits on top of the balance as it is, and reports that balance', async () => {
    const t = await build();
    const account = await fundedUsd(t, 1_000);
    const seen = await t.deps.db.transaction(async (tx) => {
      const books = openBooks(tx, t.platformId, new Date());
      await books.hold(account.id, 'USD', 300n, 'Transaction:test');
      await setAvailable(tx, account.id, 1_500n); // a deposit of 500 meanwhile
      await books.flush();
      return { balance: books.balanceOf(account.id), changed: books.changedAccounts() };
    });
    expect(seen).toEqual({ balance: { available: 1_200n, held: 300n }, changed: [account.id] });
    expect(await balances(t, account.id)).toEqual({ balance: 1_200, totalBalance: 1_500 });
  });
});
