import { Type } from '@sinclair/typebox';
import { component, PageQuery } from '../../http/schemas.js';

export const Discovery = component(
  'Discovery',
  Type.Object({ bankName: Type.String(), displayName: Type.String(), country: Type.String(), currency: Type.String() }),
);
export const DiscoveryList = component('DiscoveryListResponse', Type.Object({ data: Type.Array(Type.Ref(Discovery)) }));
export const DiscoveryQuery = Type.Object({
  country: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$' })),
  currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$' })),
});

export const Vasp = component(
  'Vasp',
  Type.Object({ vaspName: Type.String(), url: Type.Optional(Type.String({ format: 'uri' })) }),
);
// The reference's VASP page has no totalCount.
export const VaspList = component(
  'VaspListResponse',
  Type.Object({ data: Type.Array(Type.Ref(Vasp)), hasMore: Type.Boolean(), nextCursor: Type.Optional(Type.String()) }),
);
export const VaspQuery = Type.Object({ ...PageQuery });
