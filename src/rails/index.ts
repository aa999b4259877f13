// Payment rails behind one interface. A rail, given a payment, answers with its timeline:
// the outcomes it will report and when. Steps due at once are applied in the transaction
// that creates the payment; later ones become jobs (see modules/transactions). Railyard has
// one rail, the sandbox simulator; what a rail is given and answers is in types.ts.

import type { PlatformSettings } from '../http/deps.js';
import { sandboxRail } from './sandbox.js';
import type { QuotePayout, Rail, RailPayment, Settlement } from './types.js';

export function railFor(_payment: RailPayment | QuotePayout): Rail {
  return sandboxRail;
}

/**
 * How a payment of a platform with these settings settles over `paymentRail`. A platform
 * whose settings predate the setting reads as `instant` (PlatformSettings.settlementTiming).
 */
export function settlementFor(settings: PlatformSettings, paymentRail: string | null): Settlement {
  return { timing: settings.settlementTiming ?? 'instant', paymentRail };
}
