import type { Account } from '../domain/types.js';

/**
 * Who asks for a download, and through what link: the one input that decides what the
 * download costs (download-costs.ts). Every entry point names its own; a later share link
 * or WebDAV GET adds a case here and its cost there, and calls the same use case.
 */
export type Requester =
  /**
   * Anyone with a file's or a folder's public link (the raw `?download`, the inline
   * preview, the folder's ZIP): a free download, paid for with one of the client
   * address's slots and the speed cap (API.md 1 and 8).
   */
  | { link: 'public'; address: string }
  /**
   * A premium account through its signed direct link (API.md 6), already checked
   * (direct-links.ts): paid for with the account's premium traffic.
   */
  | { link: 'direct'; account: Account }
  /**
   * Anyone with a share link (issue 25), its password already checked: the share's
   * download count is taken before the first body byte of a response that starts at byte
   * 0 (share-counts.ts). Free rules from the client address, unless the share is fast and
   * its owner has premium now: then the owner's premium traffic pays, as for a direct link,
   * and the free rules apply again when that traffic runs out.
   */
  | { link: 'share'; address: string; share: { id: string; fast: boolean }; owner: Account }
  /**
   * The file's owner reading it back through a signed-in channel of their own (WebDAV GET,
   * issue 27): their own bytes, as a file manager or rclone reads them, so neither the
   * free rules (slots, speed cap: rclone reads eight files at once) nor premium traffic
   * apply, and it is no download start (the counts measure others' downloads: expiry and
   * share limits read them).
   */
  | { link: 'owner'; account: Account };
