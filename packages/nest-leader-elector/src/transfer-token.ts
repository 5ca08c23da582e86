/**
 * The token that authorises `POST /transfer` (`--transfer-token-file`): read once at start from
 * a file the operator provides (a Secret volume), never from a flag (flags show in `ps` and in
 * the pod spec), and compared with what a request presents in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { InvalidLeaderElectionOptionError } from 'nest-leader/core';
import { sidecarMessages } from './sidecar.messages.js';

/** Shortest accepted token, characters: guessing must be out of reach. */
export const MIN_TRANSFER_TOKEN_LENGTH = 16;
/** Largest token file read, bytes: a token, not a document. */
const MAX_TRANSFER_TOKEN_FILE_BYTES = 4096;

/** A transfer token, kept only as its SHA-256 digest. */
export class TransferToken {
  private readonly digest: Buffer;

  private constructor(token: string) {
    this.digest = sha256(token);
  }

  /**
   * Reads the token from `path`: the file's text without surrounding whitespace (a trailing
   * newline from `echo` is fine), at least {@link MIN_TRANSFER_TOKEN_LENGTH} printable ASCII
   * characters, no spaces.
   * @throws InvalidLeaderElectionOptionError naming `--transfer-token-file` and the rule when
   *   the file cannot be read, is too large, or holds no valid token — never its contents.
   */
  static fromFile(path: string): TransferToken {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'an error';
      throw new InvalidLeaderElectionOptionError(
        '--transfer-token-file',
        sidecarMessages.tokenFileUnreadable(code),
        path,
      );
    }
    const token = bytes.toString('latin1').trim();
    if (
      bytes.length > MAX_TRANSFER_TOKEN_FILE_BYTES ||
      token.length < MIN_TRANSFER_TOKEN_LENGTH ||
      !/^[\x21-\x7e]+$/.test(token)
    ) {
      throw new InvalidLeaderElectionOptionError(
        '--transfer-token-file',
        sidecarMessages.tokenRule(MIN_TRANSFER_TOKEN_LENGTH, MAX_TRANSFER_TOKEN_FILE_BYTES),
        path,
      );
    }
    return new TransferToken(token);
  }

  /**
   * True when `authorization` (the request's header) is `Bearer <this token>`. The digests
   * are compared with `timingSafeEqual`, so the time taken tells nothing about how much of a
   * guess was right, nor its length.
   */
  matches(authorization: string | undefined): boolean {
    const match = /^Bearer +(\S+)$/i.exec(authorization ?? '');
    return match !== null && timingSafeEqual(sha256(match[1]!), this.digest);
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'latin1').digest();
}
