import { Type } from '@sinclair/typebox';
import { component, DateTime, StringEnum } from '../../http/schemas.js';

export const BulkCustomerImportJobAccepted = component(
  'BulkCustomerImportJobAccepted',
  Type.Object({ jobId: Type.String(), status: StringEnum(['PENDING', 'PROCESSING']) }),
);

export const BulkCustomerImportErrorEntry = component(
  'BulkCustomerImportErrorEntry',
  Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Object({}, { additionalProperties: true }),
    correlationId: Type.String(),
  }),
);

export const BulkCustomerImportJob = component(
  'BulkCustomerImportJob',
  Type.Object({
    id: Type.String(),
    status: StringEnum(['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED']),
    progress: Type.Object({
      total: Type.Integer(),
      processed: Type.Integer(),
      successful: Type.Integer(),
      failed: Type.Integer(),
    }),
    errors: Type.Array(Type.Ref(BulkCustomerImportErrorEntry)),
    completedAt: Type.Optional(DateTime),
  }),
);

/** The multipart body, as the OpenAPI document describes it. */
export const BulkCustomerCsvUpload = Type.Object({ file: Type.String({ format: 'binary' }) });

export const JobIdParams = Type.Object({ jobId: Type.String() });
