// Payment rails behind one interface. A rail, given a payment, answers with its timeline:
// the outcomes it will report and when. Steps due at once are applied in the transaction
// that creates the payment; later ones become jobs (see modules/transactions). Railyard has
// one rail, the sandbox simulator; what a rail is given and answers is in types.ts.

import { sandboxRail } from './sandbox.js';
import type { QuotePayout, Rail, RailPayment } from './types.js';

export function railFor(_payment: RailPayment | QuotePayout): Rail {
  return sandboxRail;
}
