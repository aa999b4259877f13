import { Type } from '@sinclair/typebox';
import { component, DateTime, PageOf, PageQuery, StringEnum } from '../../http/schemas.js';
import { AMOUNT_MAX } from '../../rates/index.js';
import { CardMerchant } from '../transactions/schemas.js';

export const CARD_STATES = ['PENDING_KYC', 'PROCESSING', 'ACTIVE', 'FROZEN', 'CLOSED'] as const;
export type CardStateValue = (typeof CARD_STATES)[number];

export const CardState = component('CardState', StringEnum(CARD_STATES));
export const CardStateReason = component(
  'CardStateReason',
  StringEnum(['ISSUER_REJECTED', 'CLOSED_BY_PLATFORM', 'CLOSED_BY_GRID']),
);
export const CardBrand = component('CardBrand', StringEnum(['VISA', 'MASTERCARD']));
export const CardForm = component('CardForm', StringEnum(['VIRTUAL']));

const Limit = Type.Integer({ format: 'int64', minimum: 1, maximum: Number(AMOUNT_MAX) });

export const Card = component(
  'Card',
  Type.Object({
    id: Type.String(),
    cardholderId: Type.String(),
    platformCardId: Type.Optional(Type.String()),
    state: Type.Ref(CardState),
    stateReason: Type.Optional(Type.Union([Type.Ref(CardStateReason), Type.Null()])),
    brand: Type.Optional(Type.Ref(CardBrand)),
    form: Type.Ref(CardForm),
    last4: Type.Optional(Type.String()),
    expMonth: Type.Optional(Type.Integer({ minimum: 1, maximum: 12 })),
    expYear: Type.Optional(Type.Integer()),
    fundingSources: Type.Array(Type.String()),
    maxSpendPerTransaction: Type.Union([Limit, Type.Null()]),
    currency: Type.Optional(Type.String()),
    processorRef: Type.Optional(Type.String()),
    issuerRef: Type.Optional(Type.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const CardListResponse = PageOf('CardListResponse', Type.Ref(Card));

export const CardCreateRequest = component(
  'CardCreateRequest',
  Type.Object({
    cardholderId: Type.String({ minLength: 1 }),
    platformCardId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    threeDSecurePassword: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    form: Type.Ref(CardForm),
    fundingSources: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 10 }),
    maxSpendPerTransaction: Type.Optional(Limit),
  }),
);
export interface CardCreateInput {
  cardholderId: string;
  platformCardId?: string | undefined;
  threeDSecurePassword?: string | undefined;
  form: 'VIRTUAL';
  fundingSources: string[];
  maxSpendPerTransaction?: number | undefined;
}

export const CardUpdateRequest = component(
  'CardUpdateRequest',
  Type.Object({
    state: Type.Optional(StringEnum(['ACTIVE', 'FROZEN', 'CLOSED'])),
    fundingSources: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 10 })),
    maxSpendPerTransaction: Type.Optional(Type.Union([Limit, Type.Null()])),
  }),
);
export interface CardUpdateInput {
  state?: 'ACTIVE' | 'FROZEN' | 'CLOSED' | undefined;
  fundingSources?: string[] | undefined;
  maxSpendPerTransaction?: number | null | undefined;
}

export const CardRevealResponse = component(
  'CardRevealResponse',
  Type.Object({ panEmbedUrl: Type.String({ format: 'uri' }), expiresAt: DateTime }),
);

export const CardListQuery = Type.Object({
  cardholderId: Type.Optional(Type.String()),
  accountId: Type.Optional(Type.String()),
  platformCardId: Type.Optional(Type.String()),
  state: Type.Optional(StringEnum(CARD_STATES)),
  ...PageQuery,
  sortOrder: Type.Optional(StringEnum(['asc', 'desc'], { default: 'desc' })),
});

export const CardIdParams = Type.Object({ id: Type.String() });

// ------------------------------------------------------------------------------- simulators

const SimulatedAmount = Type.Integer({ format: 'int64', minimum: 1, maximum: Number(AMOUNT_MAX) });
const cardTransactionId = Type.String({ minLength: 1 });

export const SandboxCardAuthorizationRequest = component(
  'SandboxCardAuthorizationRequest',
  Type.Object({
    amount: SimulatedAmount,
    // Checked against the card's currency; without a code, the card's is meant.
    currency: Type.Object({
      code: Type.Optional(Type.String({ minLength: 1, maxLength: 10 })),
      name: Type.Optional(Type.String()),
      symbol: Type.Optional(Type.String()),
      decimals: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
    merchant: Type.Ref(CardMerchant),
  }),
);
export interface SandboxCardAuthorizationInput {
  amount: number;
  currency: { code?: string | undefined };
  merchant: { descriptor: string; mcc?: string | undefined; country?: string | undefined };
}

export const SandboxCardBalanceInquiryRequest = component(
  'SandboxCardBalanceInquiryRequest',
  Type.Object({ merchant: Type.Ref(CardMerchant) }),
);

export const SandboxCardClearingRequest = component(
  'SandboxCardClearingRequest',
  Type.Object({
    cardTransactionId,
    amount: Type.Integer({ format: 'int64', minimum: 0, maximum: Number(AMOUNT_MAX) }),
  }),
);

export const SandboxCardReturnRequest = component(
  'SandboxCardReturnRequest',
  Type.Object({ cardTransactionId, amount: SimulatedAmount }),
);

export const SandboxCardAuthorizationAdviceRequest = component(
  'SandboxCardAuthorizationAdviceRequest',
  Type.Object({ cardTransactionId, amount: SimulatedAmount }),
);

export const SandboxCardTransactionRefRequest = component(
  'SandboxCardTransactionRefRequest',
  Type.Object({ cardTransactionId }),
);

export const SandboxCardSimulationResponse = component(
  'SandboxCardSimulationResponse',
  Type.Object({ issuerTransactionToken: Type.String() }),
);

export const CARD_SIMULATION_STATUSES = ['PENDING', 'APPLIED', 'DECLINED', 'NOT_APPLIED'] as const;

/** Railyard's record of a simulated card event (GET /_railyard/card-simulations/{token}). */
export const RailyardCardSimulation = Type.Object({
  issuerTransactionToken: Type.String(),
  cardId: Type.String(),
  simulation: Type.String(),
  status: StringEnum(CARD_SIMULATION_STATUSES),
  reason: Type.Optional(Type.String()),
  cardTransactionId: Type.Optional(Type.String()),
  createdAt: DateTime,
  updatedAt: DateTime,
});
