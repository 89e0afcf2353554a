import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import type { Account } from '../../src/domain/types.js';

/**
 * A plain account for a contract suite's rows to belong to (its password hash is no hash:
 * the suites never sign in). `login` must be new in the store.
 */
export function contractAccount(store: MetadataStore, login: string, createdAt = Date.parse('2026-11-21T10:04:05Z')): Promise<Account> {
  return store.accounts.create({
    login,
    passwordHash: 'x',
    name: '',
    email: '',
    premiumStart: null,
    premiumEnd: null,
    trafficLeft: 0,
    isOperator: false,
    createdAt,
  });
}
