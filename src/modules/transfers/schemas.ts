import { Type } from '@sinclair/typebox';
import { component, StringEnum } from '../../http/schemas.js';
import { PAYMENT_RAILS } from '../transactions/schemas.js';

export const PURPOSES_OF_PAYMENT = [
  'GIFT',
  'SELF',
  'GOODS_OR_SERVICES',
  'EDUCATION',
  'HEALTH_OR_MEDICAL',
  'REAL_ESTATE_PURCHASE',
  'TAX_PAYMENT',
  'LOAN_PAYMENT',
  'UTILITY_BILL',
  'DONATION',
  'TRAVEL',
  'FAMILY_SUPPORT',
  'SALARY_PAYMENT',
  'OTHER',
] as const;

const AccountReference = Type.Object({ accountId: Type.String({ minLength: 1 }) });

/**
 * Amounts in the smallest unit. The reference leaves `amount` optional; railyard needs it
 * (a transfer of no stated amount is refused with the field named) and it must be at
 * least 1. The upper bound is the platform's per-currency maximum, checked by the service.
 */
const Amount = Type.Integer({ format: 'int64', minimum: 1 });

export const TransferInRequest = component(
  'TransferInRequest',
  Type.Object({ source: AccountReference, destination: AccountReference, amount: Amount }),
);

export const TransferOutRequest = component(
  'TransferOutRequest',
  Type.Object({
    source: AccountReference,
    destination: Type.Object({
      accountId: Type.String({ minLength: 1 }),
      paymentRail: Type.Optional(StringEnum(PAYMENT_RAILS)),
    }),
    amount: Amount,
    remittanceInformation: Type.Optional(Type.String({ maxLength: 80 })),
    purposeOfPayment: Type.Optional(StringEnum(PURPOSES_OF_PAYMENT)),
  }),
);
