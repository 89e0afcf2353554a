import { isIP } from 'node:net';

/** Who the browser and the authenticator bind a passkey to (WebAuthn §5.1.1: the RP id). */
export interface RelyingParty {
  /** The RP id: the host name of {web_url}. */
  id: string;
  /** The origin every ceremony must come from: that of {web_url}. */
  origin: string;
  /** The name authenticators may show. */
  name: string;
}

/** Why passkeys cannot work on this site, for the profile card. */
export interface NoRelyingParty {
  problem: string;
}

/**
 * The relying party of a site reached at `webUrl`. WebAuthn takes a domain as RP id, never
 * an IP address (browsers refuse one), so a site reached at http://127.0.0.1 cannot use
 * passkeys: then the reason, for the page.
 */
export function relyingPartyOf(webUrl: string): RelyingParty | NoRelyingParty {
  let url: URL;
  try {
    url = new URL(webUrl);
  } catch {
    return { problem: 'Passkeys need the site’s address (--web-url) to be set.' };
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) {
    return {
      problem: `Passkeys need the site to be reached by a host name such as localhost or files.example.org; this one is reached at the IP address ${host}.`,
    };
  }
  return { id: host, origin: url.origin, name: host };
}
