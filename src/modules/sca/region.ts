// Which customers Strong Customer Authentication applies to: those whose address is in
// the EU or the EEA. One definition for the quote challenge and every /sca operation.

import { EEA_COUNTRIES } from '../../regions.js';
import type { CustomerRow } from '../customers/lookup.js';
import { customerProfile } from '../customers/service.js';

export function inScaRegion(customer: CustomerRow | undefined): boolean {
  if (customer === undefined) return false;
  const address = customerProfile(customer).address as { country?: unknown } | undefined;
  return typeof address?.country === 'string' && EEA_COUNTRIES.has(address.country.toUpperCase());
}
