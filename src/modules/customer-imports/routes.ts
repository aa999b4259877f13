import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { acceptMultipart, readMultipart } from '../../http/multipart.js';
import { op } from '../../http/route.js';
import { BulkCustomerCsvUpload, BulkCustomerImportJob, BulkCustomerImportJobAccepted, JobIdParams } from './schemas.js';
import * as service from './service.js';

const tag = 'Customers';

export const customerImportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // The CSV arrives as multipart/form-data; only this plugin's routes accept it. Any other
  // body is read (so the client gets the answer) and refused by the service with a 400, a
  // status the reference does not declare for this operation (src/http/deviations.ts).
  await acceptMultipart(app);
  app.addContentTypeParser('*', (_request, payload, done) => {
    payload.resume();
    payload.on('end', () => done(null, undefined));
    payload.on('error', (err) => done(err, undefined));
  });

  app.post(
    '/customers/bulk/csv',
    {
      schema: op({
        operationId: 'uploadCustomersCsv',
        tag,
        summary: 'Create customers from a CSV file',
        permission: 'MANAGE',
        multipartBody: BulkCustomerCsvUpload,
        success: { 202: Type.Ref(BulkCustomerImportJobAccepted) },
        errors: [400, 401, 500],
      }),
    },
    async (request, reply) => {
      const accepted = await service.uploadCustomersCsv(
        request.ctx,
        await readMultipart(request, { fileBytesMax: service.CSV_BYTES_MAX }),
      );
      reply.code(202);
      return accepted;
    },
  );

  app.get(
    '/customers/bulk/jobs/:jobId',
    {
      schema: op({
        operationId: 'getBulkCustomerImportJob',
        tag,
        summary: 'Get a bulk customer import job',
        permission: 'VIEW',
        params: JobIdParams,
        success: { 200: Type.Ref(BulkCustomerImportJob) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getBulkCustomerImportJob(request.ctx, request.params.jobId),
  );
};
