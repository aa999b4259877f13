// Which customers Strong Customer Authentication applies to: those whose address is in
// the EU or the EEA. One definition for the quote challenge and every /sca operation.

import { customerProfile, type CustomerRow } from '../customers/service.js';

/** Countries of the EU and the EEA: customers with an address there authorize real-time-funded payments (SCA). */
const SCA_COUNTRIES = new Set([
  'AT',
  'BE',
  'BG',
  'HR',
  'CY',
  'CZ',
  'DK',
  'EE',
  'FI',
  'FR',
  'DE',
  'GR',
  'HU',
  'IE',
  'IT',
  'LV',
  'LT',
  'LU',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SK',
  'SI',
  'ES',
  'SE',
  'IS',
  'LI',
  'NO',
]);

export function inScaRegion(customer: CustomerRow | undefined): boolean {
  if (customer === undefined) return false;
  const address = customerProfile(customer).address as { country?: unknown } | undefined;
  return typeof address?.country === 'string' && SCA_COUNTRIES.has(address.country.toUpperCase());
}
