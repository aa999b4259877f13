import { Type } from '@sinclair/typebox';
import { component } from '../../http/schemas.js';
import { Currency } from '../internal-accounts/schemas.js';

export const UmaProvider = component(
  'UmaProvider',
  Type.Object({
    name: Type.Optional(Type.String()),
    supportedRegions: Type.Optional(Type.Array(Type.String())),
    domain: Type.Optional(Type.String()),
    logoUrl: Type.Optional(Type.String({ format: 'uri' })),
    supportedCurrencies: Type.Optional(Type.Array(Type.Ref(Currency))),
    lei: Type.Optional(Type.String()),
    allowListStatus: Type.Optional(Type.Boolean()),
  }),
);

export const UmaProviderListResponse = component(
  'UmaProviderListResponse',
  Type.Object({
    data: Type.Optional(Type.Array(Type.Ref(UmaProvider))),
    hasMore: Type.Optional(Type.Boolean()),
    nextCursor: Type.Optional(Type.String()),
    totalCount: Type.Optional(Type.Integer()),
  }),
);

// The operation declares no 400, so nothing in the query may be refused: every parameter is
// read leniently by the service (see service.ts) instead of being validated here.
export const UmaProviderListQuery = Type.Object({
  countryCode: Type.Optional(Type.String()),
  currencyCode: Type.Optional(Type.String()),
  hasBlockedProviders: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String()),
  cursor: Type.Optional(Type.String()),
  sortOrder: Type.Optional(Type.String()),
});
