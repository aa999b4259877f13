import { Type } from '@sinclair/typebox';
import { component } from '../../http/schemas.js';

export const EstimateCryptoWithdrawalFeeRequest = component(
  'EstimateCryptoWithdrawalFeeRequest',
  Type.Object({
    internalAccountId: Type.String(),
    currency: Type.String(),
    cryptoNetwork: Type.String(),
    amount: Type.Integer(),
    destinationAddress: Type.String(),
  }),
);

export const EstimateCryptoWithdrawalFeeResponse = component(
  'EstimateCryptoWithdrawalFeeResponse',
  Type.Object({
    networkFee: Type.Integer(),
    networkFeeAsset: Type.String(),
    applicationFee: Type.Integer(),
    totalFee: Type.Integer(),
    netAmount: Type.Integer(),
  }),
);
