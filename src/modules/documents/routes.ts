import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { acceptMultipart, readMultipart } from '../../http/multipart.js';
import { op } from '../../http/route.js';
import {
  Document,
  DocumentIdParams,
  DocumentList,
  DocumentListQuery,
  DocumentReplaceRequest,
  DocumentUploadRequest,
} from './schemas.js';
import * as service from './service.js';

const tag = 'Documents';
const limits = { fileBytesMax: service.DOCUMENT_BYTES_MAX };

export const documentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Uploads are multipart/form-data; only this plugin's routes accept it.
  await acceptMultipart(app);

  app.get(
    '/documents',
    {
      schema: op({
        operationId: 'listDocuments',
        tag,
        summary: 'List documents',
        permission: 'VIEW',
        querystring: DocumentListQuery,
        success: { 200: Type.Ref(DocumentList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listDocuments(request.ctx, request.query),
  );

  app.post(
    '/documents',
    {
      schema: op({
        operationId: 'uploadDocument',
        tag,
        summary: 'Upload a document of a customer or beneficial owner',
        permission: 'MANAGE',
        multipartBody: Type.Ref(DocumentUploadRequest),
        success: { 201: Type.Ref(Document) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) => {
      const document = await service.uploadDocument(request.ctx, await readMultipart(request, limits));
      reply.code(201);
      return document;
    },
  );

  app.get(
    '/documents/:documentId',
    {
      schema: op({
        operationId: 'getDocument',
        tag,
        summary: 'Get a document',
        permission: 'VIEW',
        params: DocumentIdParams,
        success: { 200: Type.Ref(Document) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getDocument(request.ctx, request.params.documentId),
  );

  app.put(
    '/documents/:documentId',
    {
      schema: op({
        operationId: 'replaceDocument',
        tag,
        summary: "Replace a document's file and details",
        permission: 'MANAGE',
        params: DocumentIdParams,
        multipartBody: Type.Ref(DocumentReplaceRequest),
        success: { 200: Type.Ref(Document) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request) =>
      service.replaceDocument(request.ctx, request.params.documentId, await readMultipart(request, limits)),
  );

  app.delete(
    '/documents/:documentId',
    {
      schema: op({
        operationId: 'deleteDocument',
        tag,
        summary: 'Delete a document',
        permission: 'MANAGE',
        params: DocumentIdParams,
        success: { 204: null },
        errors: [401, 404, 409, 500],
      }),
    },
    async (request, reply) => {
      await service.deleteDocument(request.ctx, request.params.documentId);
      reply.code(204);
    },
  );
};
