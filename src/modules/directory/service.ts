import { paginateRows, type PageRequest } from '../../db/pagination.js';
import { INSTITUTIONS, VASPS } from './store.js';

/** Institutions of a country and currency (each filter optional, case-insensitive), in a fixed order. */
export function getDiscoveries(query: { country?: string | undefined; currency?: string | undefined }) {
  const country = query.country?.toUpperCase();
  const currency = query.currency?.toUpperCase();
  const data = INSTITUTIONS.filter(
    (row) =>
      (country === undefined || row.country === country) && (currency === undefined || row.currency === currency),
  )
    .map((row) => ({ ...row }))
    .sort(
      (a, b) =>
        a.country.localeCompare(b.country) ||
        a.currency.localeCompare(b.currency) ||
        a.bankName.localeCompare(b.bankName),
    );
  return { data };
}

// VASPs page alphabetically; the fixed created_at only gives them the pagination's sort key.
const VASP_ROWS = VASPS.map((vasp) => ({ ...vasp, id: vasp.vaspName, created_at: '2025-10-13T00:00:00.000Z' }));

export function listVasps(page: PageRequest) {
  const result = paginateRows(VASP_ROWS, { ...page, sortOrder: 'asc' });
  return {
    data: result.rows.map((row) => ({ vaspName: row.vaspName, url: row.url })),
    hasMore: result.hasMore,
    ...(result.nextCursor !== undefined ? { nextCursor: result.nextCursor } : {}),
  };
}
