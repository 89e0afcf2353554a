import { InputError } from '../domain/errors.js';
import type { Account } from '../domain/types.js';
import type { AccountsService } from '../services/accounts-service.js';

/** What a visitor fills in to create an account. */
export interface SignUpInput {
  login: string;
  password: string;
  /** The password typed a second time. */
  passwordAgain: string;
  /** Display name; may be empty. */
  name: string;
  /** E-mail address; may be empty (nothing is ever sent to it). */
  email: string;
}

export interface SignUpServiceDeps {
  accounts: AccountsService;
  /** The operator's `--signup` setting. */
  mode: 'open' | 'closed';
}

const MAX_NAME = 100;
const MAX_EMAIL = 254;
// Control characters (C0, DEL, C1) never belong in a name or address. Bidi marks and
// other format characters are allowed (right-to-left names need them); pages isolate
// user text in <bdi> so it cannot reorder what surrounds it.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Deliberately loose: one @, something on both sides, a dot in the domain, no blanks.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Logins visitors cannot take, compared ignoring case: `admin` is the first start's
 * operator, created only once the server listens (a visitor signing up in that moment
 * would otherwise leave the site without one), and the others would pass for staff.
 * Operators can still create them with the CLI or the console.
 */
const RESERVED_LOGINS = new Set(['admin', 'administrator', 'root', 'operator', 'support', 'filehaven']);

/** Self-service accounts, when the operator opens them (`--signup open`). */
export class SignUpService {
  constructor(private readonly deps: SignUpServiceDeps) {}

  /** Whether visitors may create accounts. */
  get open(): boolean {
    return this.deps.mode === 'open';
  }

  /**
   * Creates a plain account (no premium, no operator rights); InputError with a message
   * for the visitor when the input is not acceptable or sign-up is closed.
   */
  async signUp(input: SignUpInput): Promise<Account> {
    if (!this.open) throw new InputError('sign-up is closed');
    const name = input.name.trim();
    const email = input.email.trim();
    if (name.length > MAX_NAME) throw new InputError(`name must be at most ${MAX_NAME} characters`);
    if (CONTROL.test(name)) throw new InputError('name must not contain control characters');
    if (email !== '' && (email.length > MAX_EMAIL || !EMAIL.test(email) || CONTROL.test(email))) {
      throw new InputError('e-mail must look like name@example.org (or be left empty)');
    }
    if (input.password !== input.passwordAgain) throw new InputError('the two passwords differ');
    if (RESERVED_LOGINS.has(input.login.toLowerCase())) throw new InputError(`login "${input.login}" is reserved`);
    // Login rules, password rules and "login taken" live in AccountsService.create.
    return this.deps.accounts.create({ login: input.login, password: input.password, name, email });
  }
}
