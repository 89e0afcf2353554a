import type { ServerSecrets } from '../security/secrets.js';

/**
 * The cookie a browser gets for a protected share or upload request once it gave the right
 * password (issue 25), so the page's links work without asking again. Its value is a
 * signature of the link's id and its current password hash: it opens that link only, and
 * stops working when the owner changes or removes the password. The password itself never
 * leaves the request that carried it.
 */
export class LinkAccess {
  constructor(private readonly secrets: Pick<ServerSecrets, 'sign' | 'verify'>) {}

  /** The cookie's name for a link: one per link, so access to one says nothing of another. */
  cookieName(linkId: string): string {
    return `fh_link_${linkId}`;
  }

  /** The cookie's value for a link protected by `passwordHash`. */
  token(linkId: string, passwordHash: string): string {
    return this.secrets.sign(this.message(linkId, passwordHash));
  }

  /** Whether `token` (a cookie's value, maybe absent) opens the link now; constant time. */
  opens(linkId: string, passwordHash: string, token: string | undefined): boolean {
    return token !== undefined && token.length > 0 && this.secrets.verify(this.message(linkId, passwordHash), token);
  }

  private message(linkId: string, passwordHash: string): string {
    return `link-access\n${linkId}\n${passwordHash}`;
  }
}
