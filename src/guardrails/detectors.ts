/**
 * The guardrail detectors: what each looks for (a regular expression source, combined with the
 * others into one matcher) and, where a pattern alone is too loose, a check of the candidate it
 * found (Luhn, IBAN check digits, a JWT header that decodes, a keyword value's entropy). The
 * order matters: at a given position the first detector whose pattern matches takes it, so the
 * specific token formats come before the generic rules.
 */

export type DetectorCategory = 'secrets' | 'personal';

export interface Detector {
  /** Stable id: in the config file, the placeholder, the error and the audit record. */
  readonly id: string;
  readonly category: DetectorCategory;
  /** A regex source without capture groups of its own (only `(?:…)`); flags: `g` and `i` off. */
  readonly pattern: string;
  /** Checks a candidate; absent: every match counts. */
  readonly valid?: (match: string) => boolean;
  /**
   * For a `name = value` rule: where the value starts in the match. Only the value is a finding
   * (and redacted), and a value in a specific detector's format is reported as that one.
   */
  readonly valueAt?: (match: string) => number;
}

/** Not preceded by a token character: formats that start a token on their own (`key=` is fine). */
const START = '(?<![A-Za-z0-9_\\-+/])';
/** Not followed by a token character. */
const END = '(?![A-Za-z0-9_\\-])';

export const DETECTORS: readonly Detector[] = [
  {
    id: 'private-key',
    category: 'secrets',
    // PEM armour of any private key (RSA, EC, OPENSSH, PKCS#8, encrypted, PGP).
    pattern:
      '-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\\s\\S]{16,}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----',
  },
  {
    id: 'aws-access-key',
    category: 'secrets',
    pattern: `${START}(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[A-Z2-7]{16}${END}`,
  },
  {
    id: 'gcp-api-key',
    category: 'secrets',
    // API keys and OAuth client secrets.
    pattern: `${START}(?:AIza[0-9A-Za-z_\\-]{35}|GOCSPX-[0-9A-Za-z_\\-]{28})${END}`,
  },
  {
    id: 'azure-key',
    category: 'secrets',
    // A storage account key in a connection string, or an Entra ID client secret (`xxx8Q~…`).
    pattern: `(?:AccountKey=[A-Za-z0-9+/]{86}==|${START}[A-Za-z0-9_~.]{3}\\dQ~[A-Za-z0-9_~.\\-]{31,34}${END})`,
  },
  {
    id: 'github-token',
    category: 'secrets',
    pattern: `${START}(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{82})${END}`,
  },
  {
    id: 'gitlab-token',
    category: 'secrets',
    pattern: `${START}(?:glpat|gldt|glrt|glcbt|glptt|glft)-[A-Za-z0-9_\\-]{20,}${END}`,
  },
  { id: 'npm-token', category: 'secrets', pattern: `${START}npm_[A-Za-z0-9]{36}${END}` },
  {
    id: 'pypi-token',
    category: 'secrets',
    // A macaroon whose first bytes say pypi.org.
    pattern: `${START}pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\\-]{50,}`,
  },
  {
    id: 'slack-token',
    category: 'secrets',
    pattern: `(?:${START}xox[abposr]-[0-9]{6,}-[A-Za-z0-9\\-]{10,}|https://hooks\\.slack\\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,})`,
  },
  {
    id: 'stripe-key',
    category: 'secrets',
    // Secret and restricted keys; publishable keys (pk_) are public by design.
    pattern: `${START}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{24,}${END}`,
  },
  {
    id: 'jwt',
    category: 'secrets',
    pattern: `${START}eyJ[A-Za-z0-9_\\-]{8,}\\.eyJ[A-Za-z0-9_\\-]{8,}\\.[A-Za-z0-9_\\-]{16,}${END}`,
    valid: jwtHeaderDecodes,
  },
  {
    id: 'connection-string',
    category: 'secrets',
    // scheme://user:password@host — any scheme; a templated password (${VAR}, <password>) is not one.
    pattern:
      '[a-zA-Z][a-zA-Z0-9+.\\-]{1,20}://[^\\s:/@?#"\'<>]{0,64}:[^\\s/@"\'<>]{1,128}@[A-Za-z0-9.\\-\\[\\]]+',
    valid: hasLiteralPassword,
  },
  {
    id: 'generic-secret',
    category: 'secrets',
    // A secret-sounding name assigned a random-looking value (`api_key = "…"`, `"password": "…"`).
    pattern: `(?<![A-Za-z0-9])[A-Za-z0-9_\\-]{0,24}?(?:[Pp]assw(?:or)?d|PASSW(?:OR)?D|[Pp]wd|PWD|[Ss]ecret|SECRET|[Tt]oken|TOKEN|[Aa]pi_?[Kk]ey|API_?KEY|[Aa]ccess_?[Kk]ey|ACCESS_?KEY|[Cc]redentials?|CREDENTIALS?)["']?\\s{0,3}(?::=|=|:)\\s{0,3}["']?[A-Za-z0-9+/=_\\-.~!@#$%^&*]{12,200}`,
    valid: (match) => randomLookingValue(match.slice(valueOffset(match))),
    valueAt: valueOffset,
  },
  {
    id: 'email',
    category: 'personal',
    pattern: `(?<![A-Za-z0-9._%+\\-/])[A-Za-z0-9][A-Za-z0-9._%+\\-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9\\-]{0,62}\\.)+[A-Za-z]{2,24}(?![A-Za-z0-9\\-])`,
    // Not an image variant (`icon@2x.png`) nor an SSH remote (`git@github.com:org/repo`).
    valid: (match) => !FILE_SUFFIX.test(match) && !match.startsWith('git@'),
  },
  {
    id: 'payment-card',
    category: 'personal',
    // 13 to 19 digits, in groups of 4 (or Amex 4-6-5) or unbroken, with an issuer prefix.
    pattern:
      '(?<![0-9A-Za-z.\\-])(?:[2-6][0-9]{3}(?:[ \\-]?[0-9]{4}){2,3}(?:[0-9]{1,3})?|3[47][0-9]{2}[ \\-]?[0-9]{6}[ \\-]?[0-9]{5})(?![0-9A-Za-z])',
    valid: cardNumber,
  },
  {
    id: 'iban',
    category: 'personal',
    pattern: '(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])',
    valid: iban,
  },
  {
    id: 'us-ssn',
    category: 'personal',
    pattern: '(?<![0-9\\-])[0-9]{3}-[0-9]{2}-[0-9]{4}(?![0-9\\-])',
    valid: ssn,
  },
  {
    id: 'uk-nino',
    category: 'personal',
    pattern:
      '(?<![A-Za-z0-9])[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D](?![A-Za-z0-9])',
    valid: (match) => !/^(?:BG|GB|KN|NK|NT|TN|ZZ)/.test(match),
  },
  {
    id: 'phone',
    category: 'personal',
    // International (+CC …) or North American ((555) 123-4567, 555-123-4567) with separators.
    pattern:
      '(?<![0-9A-Za-z+\\-./])(?:\\+[1-9][0-9]{0,2}[ .\\-]?(?:\\(?[0-9]{1,4}\\)?[ .\\-]?){1,4}[0-9]{2,4}|\\(?[2-9][0-9]{2}\\)?[ .\\-][2-9][0-9]{2}[ .\\-][0-9]{4})(?![0-9A-Za-z\\-])',
    valid: phone,
  },
];

const FILE_SUFFIX = /\.(?:png|jpe?g|gif|svg|webp|ico|bmp|tiff?|js|ts|css|map|json)$/i;

function jwtHeaderDecodes(match: string): boolean {
  const header = match.slice(0, match.indexOf('.'));
  try {
    const decoded = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as unknown;
    return typeof decoded === 'object' && decoded !== null && 'alg' in decoded;
  } catch {
    return false;
  }
}

function hasLiteralPassword(match: string): boolean {
  const afterScheme = match.slice(match.indexOf('://') + 3);
  const password = afterScheme.slice(afterScheme.indexOf(':') + 1, afterScheme.lastIndexOf('@'));
  return password.length > 0 && !/^(?:\$|\{|<|%\(|\*+$|x+$)/i.test(password);
}

const ASSIGNMENT = /["']?\s*(?::=|=|:)\s*["']?/;

/** Where the value of `name = value` starts (after the assignment, spaces and quote). */
function valueOffset(match: string): number {
  const found = ASSIGNMENT.exec(match);
  return found ? found.index + found[0].length : 0;
}

/** Identifiers and dotted paths (`process.env.TOKEN`, `getToken`) are code, not secrets. */
const CODE_LIKE = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;

/**
 * A value that looks generated: letters and digits mixed, no code shape, and at least 3.5 bits of
 * Shannon entropy per character (English words and placeholders stay below).
 */
export function randomLookingValue(value: string): boolean {
  if (value.length < 12 || (CODE_LIKE.test(value) && !/[0-9]/.test(value))) return false;
  if (!/[0-9]/.test(value) || !/[A-Za-z]/.test(value)) return false;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return false;
  return shannonEntropy(value) >= 3.5;
}

export function shannonEntropy(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function cardNumber(match: string): boolean {
  const digits = match.replace(/[ -]/g, '');
  if (digits.length < 13 || digits.length > 19) return false;
  if (!/^(?:4|5[1-5]|2[2-7]|3[47]|6(?:011|5|4[4-9]))/.test(digits)) return false;
  return luhn(digits);
}

/** IBAN lengths by country (ISO 13616 registry, the common ones). */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AT: 20,
  BE: 16,
  BG: 22,
  CH: 21,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  EE: 20,
  ES: 24,
  FI: 18,
  FR: 27,
  GB: 22,
  GR: 27,
  HR: 21,
  HU: 28,
  IE: 22,
  IS: 26,
  IT: 27,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MT: 31,
  NL: 18,
  NO: 15,
  PL: 28,
  PT: 25,
  RO: 24,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  TR: 26,
  AE: 23,
  SA: 24,
  IL: 23,
  QA: 29,
  BR: 29,
  UA: 29,
};

export function iban(match: string): boolean {
  const compact = match.replace(/ /g, '');
  if (IBAN_LENGTHS[compact.slice(0, 2)] !== compact.length) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const d of value) remainder = (remainder * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

function ssn(match: string): boolean {
  const [area, group, serial] = match.split('-') as [string, string, string];
  return area !== '000' && area !== '666' && area[0] !== '9' && group !== '00' && serial !== '0000';
}

function phone(match: string): boolean {
  const digits = match.replace(/[^0-9]/g, '').length;
  if (digits < 10 || digits > 15) return false;
  // A run of one separator style, not a dotted version or an address.
  return !/^\d+(?:\.\d+){3}$/.test(match);
}
