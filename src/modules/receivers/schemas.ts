import { Type } from '@sinclair/typebox';
import { component } from '../../http/schemas.js';
import { Currency } from '../internal-accounts/schemas.js';
import { CounterpartyFieldDefinition } from '../platform/schemas.js';

const positiveInt64 = Type.Integer({ format: 'int64', exclusiveMinimum: 0 });

export const CurrencyPreference = component(
  'CurrencyPreference',
  Type.Object({
    currency: Type.Ref(Currency),
    estimatedExchangeRate: Type.Number({ exclusiveMinimum: 0 }),
    min: positiveInt64,
    max: positiveInt64,
  }),
);

const lookupFields = {
  supportedCurrencies: Type.Array(Type.Ref(CurrencyPreference)),
  requiredPayerDataFields: Type.Optional(Type.Array(Type.Ref(CounterpartyFieldDefinition))),
  lookupId: Type.String(),
};

export const ReceiverUmaLookupResponse = component(
  'ReceiverUmaLookupResponse',
  Type.Object({ ...lookupFields, receiverUmaAddress: Type.String() }),
);

export const ReceiverExternalAccountLookupResponse = component(
  'ReceiverExternalAccountLookupResponse',
  Type.Object({ ...lookupFields, accountId: Type.String() }),
);

export const SenderQuery = Type.Object({
  senderUmaAddress: Type.Optional(Type.String()),
  customerId: Type.Optional(Type.String()),
});

export const UmaLookupParams = Type.Object({ receiverUmaAddress: Type.String() });
export const ExternalAccountLookupParams = Type.Object({ accountId: Type.String() });
