import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../domain/errors.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
export type MethodTable = Partial<Record<Method, Handler>>;

/**
 * Every method Node's HTTP parser knows but CONNECT (a tunnel, never a request for a
 * path): API paths answer each of them, 405 with Allow when the path has no handler for
 * it (API.md 3), so that PROPFIND or TRACE never fall through to a web 404 page.
 */
const ALL_METHODS = METHODS.filter((method) => method !== 'CONNECT');

/** Teaches the router the methods Fastify does not know by default; call before the routes. */
export function registerEveryMethod(app: FastifyInstance): void {
  for (const method of ALL_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
}
const OVERRIDES = new Set<string>(['POST', 'PUT', 'DELETE']);

function field(source: unknown, name: string): string | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  const value = (source as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The method a request means: a POST may carry `_method` (form field or query) naming
 * PUT or DELETE (or POST); a `_method` on any other method is ignored (API.md 2).
 * HEAD is served by the GET handler. Null for an override that names no known method.
 */
export function effectiveMethod(request: FastifyRequest): string | null {
  if (request.method === 'HEAD') return 'GET';
  if (request.method !== 'POST') return request.method;
  const override = field(request.body, '_method') ?? field(request.query, '_method');
  if (override === undefined || override === '') return 'POST';
  const upper = override.toUpperCase();
  return OVERRIDES.has(upper) ? upper : null;
}

/** Runs the handler for the request's effective method, or answers 405 with Allow. */
export function dispatch(table: MethodTable, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const method = effectiveMethod(request);
  const handler = method ? table[method as Method] : undefined;
  if (!handler) {
    const allowed = Object.keys(table);
    if (allowed.includes('GET')) allowed.push('HEAD');
    throw errors.methodNotAllowed(allowed);
  }
  return handler(request, reply);
}

/**
 * Registers one path for every method, so that method override and 405 are decided
 * after the body is parsed, in one place.
 */
export function apiRoute(app: FastifyInstance, url: string, table: MethodTable, config: Record<string, unknown> = {}): void {
  app.route({ method: ALL_METHODS, url, config, handler: (request, reply) => dispatch(table, request, reply) });
}

/**
 * Registers a path whose last segment is a reference `<id>` or `<id>;<suffix>` (SPEC.md's
 * `;DirectLink`, `;files`), with the `;` raw or percent-encoded (API.md 2). `tableFor`
 * picks the method table for the reference; null means no such resource (404).
 */
export function refRoute(app: FastifyInstance, url: string, tableFor: (id: string, suffix: string | undefined) => MethodTable | null): void {
  app.route({
    method: ALL_METHODS,
    url,
    handler: (request, reply) => {
      const ref = Object.values(request.params as Record<string, string>).at(-1) ?? '';
      const [id = '', suffix] = ref.replace(/%3B/gi, ';').split(';', 2);
      const table = tableFor(id, suffix);
      return table ? dispatch(table, request, reply) : reply.callNotFound();
    },
  });
}
