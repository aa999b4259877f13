import { Type } from '@sinclair/typebox';
import { PERMISSIONS } from '../../http/deps.js';
import {
  component,
  CreatedUpdatedQuery,
  DateTime,
  PageOf,
  PageQuery,
  StringEnum,
  NOT_EMPTY,
  strictly,
} from '../../http/schemas.js';

export const Permission = component('Permission', StringEnum(PERMISSIONS));

export const ApiToken = component(
  'ApiToken',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    permissions: Type.Array(Type.Ref(Permission)),
    clientId: Type.String(),
    clientSecret: Type.Optional(Type.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const ApiTokenCreateRequest = component(
  'ApiTokenCreateRequest',
  Type.Object({
    name: strictly(Type.String({ maxLength: 255 }), NOT_EMPTY),
    permissions: strictly(Type.Array(Type.Ref(Permission)), { minItems: 1, uniqueItems: true }),
  }),
);

export const TokenList = PageOf('TokenListResponse', Type.Ref(ApiToken));

export const TokenListQuery = Type.Object({
  name: Type.Optional(Type.String()),
  ...CreatedUpdatedQuery,
  ...PageQuery,
});

export const TokenIdParams = Type.Object({ tokenId: Type.String() });
