import { Type } from '@sinclair/typebox';
import { component } from '../../http/schemas.js';

export const SandboxUmaReceiveRequest = component(
  'SandboxUmaReceiveRequest',
  Type.Object({
    senderUmaAddress: Type.String(),
    receiverUmaAddress: Type.Optional(Type.String()),
    customerId: Type.Optional(Type.String()),
    receivingCurrencyCode: Type.String(),
    receivingCurrencyAmount: Type.Integer({ format: 'int64', exclusiveMinimum: 0 }),
  }),
);
