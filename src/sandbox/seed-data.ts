// The cast of the demo data set (seed.ts): countries with an address and a phone prefix each,
// and names to draw from. Plain facts, chosen by a seeded generator, so one seed always gives
// the same people.

import { base58Encode } from '../crypto/base58.js';
import { clabeCheckDigit, ibanCheckDigits } from '../modules/external-accounts/formats.js';
import { EEA_COUNTRIES } from '../regions.js';

/** mulberry32: a small seeded generator; the same seed draws the same numbers everywhere. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Draw {
  private readonly random: () => number;
  constructor(seed: number) {
    this.random = seededRandom(seed);
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }
  digits(count: number): string {
    let out = '';
    for (let i = 0; i < count; i++) out += String(this.int(0, 9));
    return out;
  }
}

export interface Country {
  code: string;
  eea: boolean;
  address: { line1: string; city: string; state?: string; postalCode: string };
  phonePrefix: string;
  firstNames: readonly string[];
  lastNames: readonly string[];
  businessNames: readonly string[];
}

/** Each country's facts; its code is its key, and whether it is in the EEA is src/regions.ts's answer. */
const FACTS: Record<string, Omit<Country, 'code' | 'eea'>> = {
  US: {
    address: { line1: '1200 Congress Avenue', city: 'Austin', state: 'TX', postalCode: '78701' },
    phonePrefix: '+1512',
    firstNames: ['Jordan', 'Avery', 'Taylor', 'Morgan', 'Casey', 'Riley'],
    lastNames: ['Rivera', 'Bennett', 'Coleman', 'Hayes', 'Brooks', 'Foster'],
    businessNames: ['Lone Star Freight LLC', 'Pecan Street Coffee Inc', 'Bluebonnet Software LLC'],
  },
  GB: {
    address: { line1: '18 Deansgate', city: 'Manchester', postalCode: 'M3 1AZ' },
    phonePrefix: '+44161',
    firstNames: ['Oliver', 'Amelia', 'Harry', 'Isla', 'George', 'Poppy'],
    lastNames: ['Clarke', 'Patel', 'Hughes', 'Wright', 'Turner', 'Shaw'],
    businessNames: ['Northern Quarter Prints Ltd', 'Irwell Logistics Ltd', 'Ancoats Bakery Ltd'],
  },
  DE: {
    address: { line1: 'Torstrasse 110', city: 'Berlin', postalCode: '10119' },
    phonePrefix: '+4930',
    firstNames: ['Lena', 'Jonas', 'Mia', 'Felix', 'Hannah', 'Lukas'],
    lastNames: ['Fischer', 'Wagner', 'Becker', 'Hoffmann', 'Schulz', 'Koch'],
    businessNames: ['Spree Werkstatt GmbH'],
  },
  FR: {
    address: { line1: '24 Rue de la Republique', city: 'Lyon', postalCode: '69002' },
    phonePrefix: '+33478',
    firstNames: ['Camille', 'Louis', 'Chloe', 'Hugo', 'Manon', 'Jules'],
    lastNames: ['Martin', 'Bernard', 'Dubois', 'Moreau', 'Laurent', 'Girard'],
    businessNames: ['Atelier Croix-Rousse SARL'],
  },
  MX: {
    address: { line1: 'Avenida Chapultepec 480', city: 'Guadalajara', state: 'JAL', postalCode: '44100' },
    phonePrefix: '+5233',
    firstNames: ['Sofia', 'Mateo', 'Valentina', 'Santiago', 'Regina', 'Diego'],
    lastNames: ['Hernandez', 'Garcia', 'Martinez', 'Lopez', 'Ramirez', 'Torres'],
    businessNames: ['Tapatia Textiles SA de CV', 'Cafe Chapultepec SA de CV'],
  },
  BR: {
    address: { line1: 'Avenida Paulista 1578', city: 'Sao Paulo', state: 'SP', postalCode: '01310-200' },
    phonePrefix: '+5511',
    firstNames: ['Ana', 'Gabriel', 'Beatriz', 'Lucas', 'Julia', 'Rafael'],
    lastNames: ['Silva', 'Santos', 'Oliveira', 'Souza', 'Costa', 'Pereira'],
    businessNames: ['Paulista Digital Ltda', 'Ipiranga Alimentos Ltda'],
  },
  NG: {
    address: { line1: '15 Admiralty Way', city: 'Lagos', postalCode: '106104' },
    phonePrefix: '+23412',
    firstNames: ['Amara', 'Chidi', 'Ngozi', 'Tunde', 'Adaeze', 'Emeka'],
    lastNames: ['Okafor', 'Adeyemi', 'Nwosu', 'Balogun', 'Eze', 'Okonkwo'],
    businessNames: ['Lekki Solar Ltd'],
  },
  PH: {
    address: { line1: '88 Osmena Boulevard', city: 'Cebu City', postalCode: '6000' },
    phonePrefix: '+6332',
    firstNames: ['Andrea', 'Paolo', 'Bea', 'Miguel', 'Kristine', 'Rafael'],
    lastNames: ['Reyes', 'Santos', 'Cruz', 'Bautista', 'Garcia', 'Mendoza'],
    businessNames: ['Visayas Outsourcing Inc'],
  },
};

export const COUNTRIES: Record<string, Country> = Object.fromEntries(
  Object.entries(FACTS).map(([code, facts]) => [code, { code, eea: EEA_COUNTRIES.has(code), ...facts }]),
);

/** A phone number of the country: its prefix, then drawn digits up to 12. */
export function phoneOf(draw: Draw, country: Country): string {
  return `${country.phonePrefix}${draw.digits(12 - (country.phonePrefix.length - 1))}`;
}

/** An IBAN of the country whose last three characters are `suffix`, with correct check digits. */
export function ibanOf(draw: Draw, country: string, bbanLength: number, suffix: string): string {
  const bban = draw.digits(bbanLength - suffix.length) + suffix;
  return `${country}${ibanCheckDigits(country, bban)}${bban}`;
}

/** An 18-digit CLABE ending in `suffix` (its last digit is the check digit, so one earlier digit is adjusted). */
export function clabeOf(draw: Draw, suffix: string): string {
  const head = draw.digits(15) + suffix.slice(0, 2);
  for (let d = 0; d < 10; d++) {
    const candidate = head.slice(0, 10) + String(d) + head.slice(11);
    if (clabeCheckDigit(candidate) === Number(suffix[2])) return candidate + suffix[2];
  }
  throw new Error('unreachable: position 10 has weight 7, which reaches every check digit');
}

/** A Solana address: 32 drawn bytes in base58. */
export function solanaAddressOf(draw: Draw): string {
  return base58Encode(Uint8Array.from({ length: 32 }, () => draw.int(1, 255)));
}
