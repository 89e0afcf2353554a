import type { FastifyRequest } from 'fastify';
import { errors } from '../../domain/errors.js';
import type { Account } from '../../domain/types.js';
import type { HttpContext } from '../context.js';

/** The services this module calls. */
type Context = HttpContext<'accounts'>;

/** The API key of a request: the Authorization header, bare (SPEC.md) or as a Bearer token. */
export function apiKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const key = header.replace(/^Bearer\s+/i, '').trim();
  return key === '' ? undefined : key;
}

/** The account of the request's API key; 401 "Wrong apikey" when missing or unknown (API.md 3). */
export async function requireAccount(context: Context, request: FastifyRequest): Promise<Account> {
  const key = apiKeyOf(request);
  const account = key ? await context.services.accounts.accountForApiKey(key) : null;
  if (!account) throw errors.wrongApiKey();
  return account;
}

/** As requireAccount, and the account must have active premium (SPEC.md: file details, direct link). */
export async function requirePremium(context: Context, request: FastifyRequest): Promise<Account> {
  const account = await requireAccount(context, request);
  if (!context.services.accounts.isPremium(account)) throw errors.notPremium();
  return account;
}
