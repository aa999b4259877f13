import { Type } from '@sinclair/typebox';
import { component, DateTime, StringEnum, NOT_EMPTY, strictly } from '../../http/schemas.js';
import { CurrencyAmount } from '../internal-accounts/schemas.js';

export const UmaInvitationCreateRequest = component(
  'UmaInvitationCreateRequest',
  Type.Object({
    inviterUma: Type.String({ minLength: 1, maxLength: 255 }),
    firstName: Type.Optional(strictly(Type.String({ maxLength: 100 }), NOT_EMPTY)),
    amountToSend: Type.Optional(Type.Integer({ format: 'int64', minimum: 1, maximum: 1_000_000_000_000 })),
    expiresAt: Type.Optional(DateTime),
  }),
);
export interface InvitationCreateInput {
  inviterUma: string;
  firstName?: string | undefined;
  amountToSend?: number | undefined;
  expiresAt?: string | undefined;
}

export const UmaInvitation = component(
  'UmaInvitation',
  Type.Object({
    code: Type.String(),
    createdAt: DateTime,
    claimedAt: Type.Optional(DateTime),
    url: Type.String(),
    expiresAt: Type.Optional(DateTime),
    inviterUma: Type.String(),
    inviteeUma: Type.Optional(Type.String()),
    status: StringEnum(['PENDING', 'CLAIMED', 'EXPIRED', 'CANCELLED']),
    firstName: Type.Optional(Type.String()),
    amountToSend: Type.Optional(Type.Ref(CurrencyAmount)),
  }),
);

export const UmaInvitationClaimRequest = component(
  'UmaInvitationClaimRequest',
  Type.Object({ inviteeUma: Type.String({ minLength: 1, maxLength: 255 }) }),
);

export const InvitationCodeParams = Type.Object({ invitationCode: Type.String() });
