// [signing] of the config (gateway/contract/signing.md, "Keys"): its cross-key rules, and the shell that reads the
// keys file or systemd credential into the verifier's policy. Errors are config errors (exit status 2); none
// quotes a key or a keys file's line.

import { join } from 'node:path';

import { ConfigError, quote } from './config-error.js';
import { SECTIONS } from './config-schema.js';
import { KeysFileError, readKeys } from './keys-file.js';
import { isSourceName } from './protocol.js';
import { signingPolicy } from './signing.js';

const CREDENTIALS_DIRECTORY = 'CREDENTIALS_DIRECTORY';
/** [signing] at its defaults, for a config built in code without the section. */
const DEFAULT_SIGNING = Object.fromEntries(Object.entries(SECTIONS.signing).map(([key, { default: value }]) =>
  [key, value]));

export function checkSigning(config, origins) {
  const { signing } = config;
  if (signing.keys_file && signing.keys_credential) {
    throw new ConfigError('signing.keys_credential', 'conflict', 'keys_file and keys_credential: at most one of them',
      origins.get('signing.keys_credential') ?? '');
  }
  signing.unsigned_allowed.forEach((source, index) => {
    if (!isSourceName(source)) {
      throw new ConfigError(`signing.unsigned_allowed[${index}]`, 'syntax',
        `${quote(source)} is not a source name ([A-Za-z0-9_-]{1,32})`, origins.get('signing.unsigned_allowed') ?? '');
    }
  });
}

/** The keys (read now: at start only) and the settings of [signing]; throws ConfigError. */
export function loadSigningPolicy(config, env = process.env) {
  const signing = config.signing ?? DEFAULT_SIGNING;
  let key = 'signing.keys_file';
  let path = signing.keys_file;
  if (signing.keys_credential) {
    key = 'signing.keys_credential';
    const folder = env[CREDENTIALS_DIRECTORY];
    if (!folder) {
      throw new ConfigError(key, 'unreadable', `${CREDENTIALS_DIRECTORY} is not set: a unit's LoadCredential= sets it`);
    }
    path = join(folder, signing.keys_credential);
  }
  let keys = new Map();
  if (path) {
    try {
      keys = readKeys(path);
    } catch (error) {
      if (!(error instanceof KeysFileError)) throw error;
      throw new ConfigError(key, error.rule, `keys file ${path}: ${error.message}`);
    }
  }
  return signingPolicy(keys, new Set(signing.unsigned_allowed), signing.must_sign);
}
