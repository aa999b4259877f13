// The request and answer objects of the snapshot endpoints (railyard's own: no reference names).

import { Type } from '@sinclair/typebox';
import { DateTime } from '../../http/schemas.js';

export const SNAPSHOT_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

export const SnapshotName = Type.String({
  pattern: SNAPSHOT_NAME_PATTERN,
  minLength: 1,
  maxLength: 64,
  description: 'Letters, digits, ".", "_" and "-", starting with a letter or digit; at most 64 characters',
});

export const SnapshotNameParams = Type.Object({ name: SnapshotName });

export const SnapshotCreate = Type.Object(
  {
    name: SnapshotName,
    replace: Type.Optional(
      Type.Boolean({ description: 'Replace a snapshot of that name; without it, a taken name answers 409' }),
    ),
  },
  { additionalProperties: false },
);

export const Snapshot = Type.Object({
  name: Type.String(),
  // The platform's sandbox time when it was saved: the time a restore brings back.
  createdAt: DateTime,
  schemaVersion: Type.String({ description: 'The last migration of the store that saved it' }),
  sizeBytes: Type.Integer(),
  rows: Type.Record(Type.String(), Type.Integer(), { description: 'Rows held, by table' }),
});

export const SnapshotList = Type.Object({ data: Type.Array(Snapshot) });

export const SnapshotRestore = Type.Object({
  name: Type.String(),
  platformId: Type.String(),
  clock: Type.Object({ now: DateTime, offsetSeconds: Type.Number() }),
  restored: Type.Record(Type.String(), Type.Integer(), { description: 'Rows put back, by table' }),
  removed: Type.Record(Type.String(), Type.Integer(), { description: 'Rows deleted first, by table' }),
});
