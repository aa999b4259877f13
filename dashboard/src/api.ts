// Every request the dashboard makes: to railyard's Grid API and its /_railyard endpoints, with
// the signed-in platform's credentials as HTTP Basic, so it sees exactly that platform's data.
// The credentials live in sessionStorage only: they go when the tab closes.

export const GRID = '/grid/2025-10-13';
export const ADMIN = '/_railyard';

const STORAGE_KEY = 'railyard.dashboard.credentials';

export interface Credentials {
  clientId: string;
  clientSecret: string;
}

// biome-ignore lint/suspicious/noExplicitAny: the dashboard reads API objects as they come; each page names the fields it shows
export type Obj = Record<string, any>;

export interface Page<T = Obj> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount?: number;
}

/** A non-2xx answer, in railyard's error envelope {status, code, message, details?}. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export function savedCredentials(): Credentials | undefined {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (raw === null) return undefined;
    const parsed = JSON.parse(raw) as Partial<Credentials>;
    if (typeof parsed.clientId === 'string' && typeof parsed.clientSecret === 'string')
      return { clientId: parsed.clientId, clientSecret: parsed.clientSecret };
  } catch {
    // Storage unavailable or unreadable: sign in again.
  }
  return undefined;
}

export function saveCredentials(credentials: Credentials | undefined): void {
  if (credentials === undefined) sessionStorage.removeItem(STORAGE_KEY);
  else sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credentials));
}

let current: Credentials | undefined = savedCredentials();
const signedOutListeners = new Set<() => void>();

export function setCredentials(credentials: Credentials | undefined): void {
  current = credentials;
}

/** Called when the server stops accepting the credentials (a deleted token, say). */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

function authorization(credentials: Credentials): string {
  const bytes = new TextEncoder().encode(`${credentials.clientId}:${credentials.clientSecret}`);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

export async function request<T = Obj>(
  method: string,
  path: string,
  body?: unknown,
  credentials: Credentials | undefined = current,
): Promise<T> {
  if (credentials === undefined) throw new ApiError(401, 'UNAUTHORIZED', 'Not signed in');
  const headers: Record<string, string> = {
    authorization: authorization(credentials),
    accept: 'application/json',
    // The dashboard's reads are not the app's requests: the request journal leaves them out.
    'x-railyard-journal': 'off',
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    cache: 'no-store',
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const envelope = (parsed ?? {}) as Obj;
    if (response.status === 401 && credentials === current) for (const listener of signedOutListeners) listener();
    throw new ApiError(
      response.status,
      String(envelope.code ?? 'HTTP_ERROR'),
      String(envelope.message ?? `${response.status} ${response.statusText}`),
      envelope.details,
    );
  }
  return parsed as T;
}

export const get = <T = Obj>(path: string) => request<T>('GET', path);
export const post = <T = Obj>(path: string, body?: unknown) => request<T>('POST', path, body);

/** A query string from the values that are set. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    if (value !== undefined && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

export const id = encodeURIComponent;
