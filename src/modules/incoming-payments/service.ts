// Incoming UMA payments simulated by the sandbox (POST /sandbox/uma/receive): a sandbox UMA
// sender pays one of the platform's customers, in the receiving currency and amount given
// (no conversion). The transactions area accepts it as a pending credit and asks the platform
// to approve it (INCOMING_PAYMENT.PENDING); the decision completes or fails it. A customer
// whose external account in that currency is flagged defaultUmaDepositAccount (and ACTIVE)
// is paid there instead: the payment's destination is that account, and on completion the
// money is passed on to it rather than credited to the internal account.
//
// Checks, in order, each with its own code, before anything is written:
//   1. the body is well formed, by its schema and its own rules together (400:
//      INVALID_UMA_ADDRESS when only addresses are malformed, INVALID_CURRENCY when only the
//      currency is unknown, else INVALID_INPUT; every invalid field at once)
//   2. the sender is a sandbox UMA address (404 UMA_NOT_FOUND)
//   3. the receiver is a live customer (404 USER_NOT_FOUND by id, UMA_NOT_FOUND by address);
//      when both are given they name the same customer (400 INVALID_INPUT)
//   4. the customer holds an active account in the currency and the platform takes incoming
//      payments in it (400 INVALID_CURRENCY / INVALID_INPUT)
//   5. the amount is within the platform's limits for the currency (400 AMOUNT_OUT_OF_RANGE,
//      TRANSACTION_SIZE_LIMIT_EXCEEDED), and the balance stays under the maximum (400 INVALID_AMOUNT)

import { currencyInfo } from '../../currencies.js';
import type { Ctx } from '../../http/context.js';
import { apiError, FieldErrors, type FieldError } from '../../http/errors.js';
import { parseUmaAddress, sandboxUmaCounterpartyFor } from '../../rails/magic.js';
import { activeCustomer, type CustomerRow } from '../customers/lookup.js';
import { findActiveCustomerByUmaAddress } from '../customers/service.js';
import { umaDepositAccountFor } from '../external-accounts/service.js';
import { findOwnerAccountIn, ledgerRefusal } from '../internal-accounts/service.js';
import { readPlatformConfig, requireWithinLimits } from '../platform/config.js';
import { receiveUmaPayment } from '../transactions/service.js';

export interface SandboxReceiveInput {
  senderUmaAddress: string;
  receiverUmaAddress?: string | undefined;
  customerId?: string | undefined;
  receivingCurrencyCode: string;
  receivingCurrencyAmount: number;
}

/** What a sandbox sender discloses about itself (the payment's counterpartyInformation). */
function senderInformation(name: string): Record<string, unknown> {
  return { FULL_NAME: `Sandbox Sender ${name}`, NATIONALITY: 'US', COUNTRY_OF_RESIDENCE: 'US' };
}

const ADDRESS_MESSAGE = 'must be a UMA address such as $name@domain.example';

/**
 * Step 1. `schemaErrors`: what the request schema found; the body's own rules run on the
 * fields it left well typed, and every problem comes back in one 400.
 */
function checkBody(body: SandboxReceiveInput, schemaErrors: FieldError[]): void {
  const errors = new FieldErrors();
  for (const error of schemaErrors) errors.add(error.field, error.message);
  const typed = (field: keyof SandboxReceiveInput) =>
    typeof body?.[field] === 'string' && !schemaErrors.some((e) => e.field === field);
  if (typed('senderUmaAddress') && parseUmaAddress(body.senderUmaAddress) === undefined)
    errors.add('senderUmaAddress', ADDRESS_MESSAGE);
  if (
    body !== null &&
    typeof body === 'object' &&
    body.receiverUmaAddress === undefined &&
    body.customerId === undefined
  ) {
    errors.add('receiverUmaAddress', 'or customerId is required: name the receiving customer');
    errors.add('customerId', 'or receiverUmaAddress is required: name the receiving customer');
  }
  if (typed('receiverUmaAddress') && parseUmaAddress(body.receiverUmaAddress!) === undefined)
    errors.add('receiverUmaAddress', ADDRESS_MESSAGE);
  if (typed('receivingCurrencyCode') && currencyInfo(body.receivingCurrencyCode) === undefined) {
    errors.add('receivingCurrencyCode', `is not a currency railyard knows: ${body.receivingCurrencyCode}`);
  }
  if (errors.empty) return;
  // A malformed body is INVALID_INPUT; the two narrower codes are for well-typed bodies.
  if (schemaErrors.length > 0) errors.throwIfAny();
  const fields = errors.errors;
  if (fields.every((e) => e.message === ADDRESS_MESSAGE)) {
    throw apiError('INVALID_UMA_ADDRESS', fields.map((e) => `${e.field} ${e.message}`).join('; '), { errors: fields });
  }
  if (fields.length === 1 && fields[0]!.field === 'receivingCurrencyCode') {
    throw apiError('INVALID_CURRENCY', `receivingCurrencyCode ${fields[0]!.message}`, { errors: fields });
  }
  errors.throwIfAny();
}

export async function sandboxReceive(ctx: Ctx, body: SandboxReceiveInput, schemaErrors: FieldError[] = []) {
  checkBody(body, schemaErrors);
  const sender = sandboxUmaCounterpartyFor(body.senderUmaAddress);
  if (sender === undefined) {
    throw apiError(
      'UMA_NOT_FOUND',
      `No sandbox sender at ${body.senderUmaAddress}; use one of the sandbox UMA addresses`,
      { field: 'senderUmaAddress' },
    );
  }
  const { name, domain } = parseUmaAddress(body.senderUmaAddress)!;
  const senderAddress = `$${name}@${domain}`;
  const currency = body.receivingCurrencyCode;

  return ctx.db.transaction(async (tx) => {
    const config = await readPlatformConfig(tx, ctx.platformId);
    let customer: CustomerRow | undefined;
    if (body.customerId !== undefined) customer = await activeCustomer(tx, ctx.platformId, body.customerId);
    if (body.receiverUmaAddress !== undefined) {
      const byAddress = await findActiveCustomerByUmaAddress(
        tx,
        ctx.platformId,
        body.receiverUmaAddress,
        config.umaDomain,
      );
      if (byAddress === undefined && customer === undefined) {
        throw apiError('UMA_NOT_FOUND', `No customer of this platform has the UMA address ${body.receiverUmaAddress}`, {
          field: 'receiverUmaAddress',
        });
      }
      if (customer !== undefined && byAddress?.id !== customer.id) {
        throw apiError('INVALID_INPUT', 'receiverUmaAddress and customerId name different customers', {
          errors: [
            {
              field: 'receiverUmaAddress',
              message: `is not the UMA address of customer ${customer.id} (${customer.uma_address})`,
            },
          ],
        });
      }
      customer ??= byAddress;
    }

    const account = await findOwnerAccountIn(tx, ctx.platformId, customer!.id, currency);
    const limits = config.supportedCurrencies.find((c) => c.currencyCode === currency);
    if (account === undefined || limits === undefined || !limits.enabledTransactionTypes.includes('INCOMING')) {
      throw apiError('INVALID_CURRENCY', `The platform does not take incoming ${currency} payments for its customers`, {
        errors: [
          {
            field: 'receivingCurrencyCode',
            message: `is not a currency the platform enables for incoming payments (${config.supportedCurrencies.map((c) => c.currencyCode).join(', ')})`,
          },
        ],
      });
    }
    if (account.status !== 'ACTIVE') {
      throw apiError('INVALID_INPUT', `The customer's ${currency} account is ${account.status}`, {
        errors: [{ field: 'receivingCurrencyCode', message: `credits an account that is ${account.status}` }],
      });
    }
    const amount = BigInt(body.receivingCurrencyAmount);
    requireWithinLimits(limits, amount, 'receivingCurrencyAmount');
    try {
      return await receiveUmaPayment(
        tx,
        {
          platformId: ctx.platformId,
          customerId: customer!.id,
          platformCustomerId: customer!.platform_customer_id,
          internalAccountId: account.id,
          currency,
          amount,
          senderUmaAddress: senderAddress,
          counterpartyInformation: senderInformation(name),
          scenario: sender.scenario,
          depositAccountId: await umaDepositAccountFor(tx, ctx.platformId, customer!.id, currency),
        },
        ctx.now,
      );
    } catch (err) {
      throw ledgerRefusal(err, 'receivingCurrencyAmount');
    }
  });
}
