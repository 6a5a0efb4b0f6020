/**
 * The labelled guardrail corpus: texts as they appear in tool arguments and results (config
 * files, logs, JSON, shell, prose), each with the detectors that must fire on it. Positives are
 * fake values in the real formats (generated from a fixed seed, so the corpus is the same on every
 * run; card numbers pass Luhn, IBANs carry valid check digits, JWT headers decode); negatives are
 * the look-alikes a detector must leave alone (UUIDs, hashes, base64 images, code that names a
 * `token`, numbers failing their checks). None of the values is a real credential or person.
 */

export interface Sample {
  text: string;
  /** The detectors that must fire; empty for a hard negative. */
  expect: string[];
}

/** mulberry32: a small seeded PRNG, so the corpus never changes between runs. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(36);
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const B64 = ALNUM + '+/';
const B64URL = ALNUM + '-_';
const HEX = '0123456789abcdef';

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}
function chars(alphabet: string, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}
function digits(n: number): string {
  return chars(DIGITS, n);
}

/** Wraps a value the way it turns up in tool traffic. */
const CONTEXTS: ReadonlyArray<(v: string) => string> = [
  (v) => v,
  (v) => `Here is the value you asked for: ${v}`,
  (v) => `{"result": "${v}", "ok": true}`,
  (v) => `2026-11-27T10:15:02Z INFO request processed value=${v} latency=12ms`,
  (v) => `- name: deploy\n  run: ./deploy.sh ${v}\n`,
  (v) => `| row | ${v} | active |`,
  (v) => `Contents of notes.txt:\n\n${v}\n\nEnd of file.`,
];
function inContext(v: string, i: number): string {
  return (CONTEXTS[i % CONTEXTS.length] as (v: string) => string)(v);
}

function luhnDigit(partial: string): string {
  let sum = 0;
  for (let i = 0; i < partial.length; i++) {
    let d = Number(partial[partial.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

function ibanOf(country: string, bban: string): string {
  const rearranged = `${bban}${country}00`;
  let remainder = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const d of value) remainder = (remainder * 10 + Number(d)) % 97;
  }
  const check = String(98 - remainder).padStart(2, '0');
  return `${country}${check}${bban}`;
}

function grouped(value: string): string {
  return value.replace(/(.{4})/g, '$1 ').trim();
}

const b64url = (s: string) => Buffer.from(s).toString('base64url');

/** Positives: for each detector, a generator of its values. */
const POSITIVES: Record<string, (i: number) => string> = {
  'aws-access-key': (i) =>
    `${pick(['AKIA', 'ASIA'])}${chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}${i % 3 === 0 ? '' : ''}`,
  'gcp-api-key': (i) => (i % 3 === 2 ? `GOCSPX-${chars(B64URL, 28)}` : `AIza${chars(B64URL, 35)}`),
  'azure-key': (i) =>
    i % 2 === 0
      ? `DefaultEndpointsProtocol=https;AccountName=acct${i};AccountKey=${chars(B64, 86)}==;EndpointSuffix=core.windows.net`
      : `${chars(ALNUM, 3)}${digits(1)}Q~${chars(ALNUM + '_~.-', 34)}`,
  'github-token': (i) =>
    i % 3 === 2
      ? `github_pat_${chars(ALNUM + '_', 82)}`
      : `${pick(['ghp', 'gho', 'ghs', 'ghu'])}_${chars(ALNUM, 36)}`,
  'gitlab-token': () => `${pick(['glpat', 'glpat', 'gldt'])}-${chars(ALNUM + '_-', 20)}`,
  'npm-token': () => `npm_${chars(ALNUM, 36)}`,
  'pypi-token': () => `pypi-AgEIcHlwaS5vcmc${chars(B64URL, 64)}`,
  'slack-token': (i) =>
    i % 3 === 2
      ? `https://hooks.slack.com/services/T${chars(UPPER + DIGITS, 8)}/B${chars(UPPER + DIGITS, 10)}/${chars(ALNUM, 24)}`
      : `${pick(['xoxb', 'xoxp'])}-${digits(12)}-${digits(12)}-${chars(ALNUM, 24)}`,
  'stripe-key': () => `${pick(['sk_live', 'sk_test', 'rk_live'])}_${chars(ALNUM, pick([24, 34, 99]))}`,
  jwt: (i) =>
    `${b64url(JSON.stringify({ alg: pick(['HS256', 'RS256', 'ES256']), typ: 'JWT' }))}.${b64url(
      JSON.stringify({ sub: `user-${i}`, iat: 1764230000 + i, scope: 'read write' }),
    )}.${chars(B64URL, 43)}`,
  'connection-string': (i) => {
    const pw = chars(ALNUM + '!*', 14);
    return pick([
      `postgres://app_user:${pw}@db-${i}.internal:5432/orders`,
      `mongodb+srv://admin:${pw}@cluster0.abcde.mongodb.net/test?retryWrites=true`,
      `mysql://root:${pw}@127.0.0.1:3306/shop`,
      `redis://:${pw}@cache.internal:6379/0`,
      `amqp://guest:${pw}@rabbit.local:5672/`,
    ]);
  },
  'private-key': () => {
    const kind = pick(['RSA ', 'EC ', 'OPENSSH ', '']);
    const body = Array.from({ length: 6 }, () => chars(B64, 64)).join('\n');
    return `-----BEGIN ${kind}PRIVATE KEY-----\n${body}\n-----END ${kind}PRIVATE KEY-----`;
  },
  'generic-secret': (i) => {
    const value = chars(ALNUM, 16) + digits(4);
    return pick([
      `password: "${value}"`,
      `API_KEY=${value}`,
      `client_secret = '${value}'`,
      `"access_token": "${value}"`,
      `db_password=${value}`,
      `export SERVICE_TOKEN="${value}"`,
    ]).concat(i % 2 === 0 ? '' : '\n');
  },
  email: (i) =>
    `${pick(['alice', 'bob.smith', 'j.doe+news', 'maria_garcia', 'chen.wei'])}${i}@${pick(['example.com', 'mail.example.org', 'corp.example.co.uk', 'example.de'])}`,
  phone: () =>
    pick([
      `+44 20 7946 ${digits(4)}`,
      `+1 (415) 555-${digits(4)}`,
      `+49 30 ${digits(8)}`,
      `(212) 555-${digits(4)}`,
      `646-555-${digits(4)}`,
      `+33 1 ${digits(2)} ${digits(2)} ${digits(2)} ${digits(2)}`,
      `+81-3-${digits(4)}-${digits(4)}`,
    ]),
  'payment-card': (i) => {
    const prefix = pick(['4', '51', '55', '2221', '6011']);
    const partial = prefix + digits(15 - prefix.length);
    const number = partial + luhnDigit(partial);
    if (i % 4 === 3) {
      const amex = `3${pick(['4', '7'])}${digits(12)}`;
      const full = amex + luhnDigit(amex);
      return `${full.slice(0, 4)} ${full.slice(4, 10)} ${full.slice(10)}`;
    }
    return i % 2 === 0 ? grouped(number) : number;
  },
  iban: (i) => {
    const value = pick([
      () => ibanOf('DE', digits(18)),
      () => ibanOf('GB', `${pick(['NWBK', 'BARC', 'HBUK'])}${digits(14)}`),
      () => ibanOf('FR', digits(23)),
      () => ibanOf('NL', `${pick(['ABNA', 'INGB', 'RABO'])}${digits(10)}`),
      () => ibanOf('ES', digits(20)),
    ])();
    return i % 2 === 0 ? grouped(value) : value;
  },
  'us-ssn': () =>
    `${pick(['123', '219', '078', '512', '734'])}-${pick(['45', '09', '33', '71'])}-${digits(3)}${pick(['1', '7'])}`,
  'uk-nino': () => `${pick(['AB', 'JG', 'PR', 'WL', 'CE'])}${digits(6)}${pick(['A', 'B', 'C', 'D'])}`,
};

/** Hard negatives: look-alikes none of the detectors may report. */
function negatives(): Sample[] {
  const none = (text: string): Sample => ({ text, expect: [] });
  const out: Sample[] = [];
  const uuid = () =>
    `${chars(HEX, 8)}-${chars(HEX, 4)}-4${chars(HEX, 3)}-a${chars(HEX, 3)}-${chars(HEX, 12)}`;
  for (let i = 0; i < 8; i++) out.push(none(`request_id=${uuid()} status=200`));
  for (let i = 0; i < 6; i++) out.push(none(`commit ${chars(HEX, 40)}\nAuthor: CI Bot`));
  for (let i = 0; i < 6; i++) out.push(none(`sha256:${chars(HEX, 64)}`));
  for (let i = 0; i < 4; i++) out.push(none(`md5 ${chars(HEX, 32)}  archive.tar.gz`));
  for (let i = 0; i < 6; i++)
    out.push(none(`<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA${chars(B64, 300)}==">`));
  for (let i = 0; i < 4; i++) out.push(none(`{"blob": "${chars(B64, 200)}"}`));
  out.push(
    ...[
      'const token = req.headers.authorization?.slice(7);',
      'function getToken(): string { return this.token; }',
      'let apiKey = process.env.OPENAI_API_KEY;',
      'password: string; // the user password, never logged',
      'if (!secretName) throw new Error("secret name required");',
      'TOKEN_URL=https://auth.example.com/oauth/token',
      'token_count = 1024',
      'max_tokens: 4096',
      'const password = await prompt("Password: ");',
      'secret = get_secret(name="db-password")',
      'The access_key field is documented in the reference manual.',
      'password = "changeme"',
      'api_key: ${API_KEY}',
      'DB_PASSWORD=<your password here>',
      'tokenizer = AutoTokenizer.from_pretrained(model_name)',
      'credentials = load_credentials(path)',
      'self.secret_manager = SecretManager(region=region)',
      'auth_token: Optional[str] = None',
    ].map(none),
  );
  out.push(
    ...[
      'pk_live_' + chars(ALNUM, 24),
      'postgres://localhost:5432/app',
      'postgres://app_user@db.internal:5432/orders',
      'postgres://user:${DB_PASSWORD}@db:5432/app',
      'mysql://root:<password>@localhost/shop',
      'https://example.com:8443/path/to/page',
      'git@github.com:example/repo.git',
      'See icon@2x.png and logo@3x.webp',
      'npm install @types/node@22.10.1',
      'user@localhost',
      'ghp_short',
      'AKIA' + 'SHORT',
      'eyJhbGciOi-not-a-token',
      'version 10.2.3.4',
      'Server at 192.168.100.200 port 8080',
      'Released 2026-11-27 14:05:33 UTC',
      'Order #4111111111111112 shipped',
      'Tracking 1234 5678 9012 3456 in transit',
      'Timestamp 1764230402123',
      'Account 123456789012 in us-east-1',
      'ISBN 978-3-16-148410-0',
      'SSN-like 000-12-3456 is invalid',
      'Code 666-12-3456 is not a valid SSN',
      'Invoice 987-65-4320 for ACME',
      'IBAN DE00 3704 0044 0532 0130 00 (bad check digits)',
      'GB82 WEST 1234 5698 7654 34 (one digit off)',
      'Build 20261127-1405-0042',
      'Coordinates 51.5074, -0.1278',
      'Call extension 4567 or room 1234',
      'Dimensions 1920x1080 at 60 fps',
      'Part number DE12345678 in stock',
      'BG 12 34 56 A is not a valid NINO prefix',
      'Mac address 00:1A:2B:3C:4D:5E',
      'IPv6 2001:db8:85a3::8a2e:370:7334',
      'Price: 1,234,567.89 EUR',
      'Run ID 7f3c9e2a-0b1d-4c5e-9f8a-6b7c8d9e0f1a finished',
      'Semver 1.2.3-beta.4+build.5',
      'The phone field is optional; format +CC NNN.',
      'Matrix: [[1, 2, 3], [4, 5, 6]]',
      'Duration 00:12:34.567',
      'Ratio 3.14159265358979',
      'chmod 0755 /usr/local/bin/tool',
      'Range 10-20-30 units',
      'Queue depth 5551234 messages',
    ].map(none),
  );
  // Card-shaped numbers that fail Luhn.
  for (let i = 0; i < 8; i++) {
    const partial = '4' + digits(14);
    const bad = String((Number(luhnDigit(partial)) + 1 + (i % 8)) % 10);
    out.push(none(`ref ${grouped(partial + bad)}`));
  }
  // IBAN-shaped strings with wrong check digits.
  for (let i = 0; i < 6; i++) {
    const good = ibanOf('DE', digits(18));
    const wrong = String((Number(good.slice(2, 4)) + 1 + i) % 100).padStart(2, '0');
    out.push(none(`transfer ref DE${wrong}${good.slice(4)}`));
  }
  // Random words and prose with secret-sounding names but no secret.
  for (let i = 0; i < 6; i++)
    out.push(
      none(`The ${pick(['token', 'password', 'secret', 'api key'])} rotation runs every ${i + 2} days.`),
    );
  return out;
}

/**
 * Hard positives: real findings in shapes the detectors are known to handle badly or not at all.
 * They stay in the corpus so the scores say so (docs/security.md lists them as limits).
 */
function hardPositives(): Sample[] {
  const one = (detector: string, text: string): Sample => ({ text, expect: [detector] });
  const body = Array.from({ length: 4 }, () => chars(B64, 64)).join('\\n');
  return [
    // A PEM key inside JSON inside a tool result: newlines escaped as the two characters `\n`.
    one(
      'private-key',
      `{"service_account": {"private_key": "-----BEGIN PRIVATE KEY-----\\n${body}\\n-----END PRIVATE KEY-----\\n"}}`,
    ),
    one('aws-access-key', `aws_access_key_id = ${'AKIA'}${chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`),
    one('generic-secret', `aws_secret_access_key = ${chars(B64, 40)}`),
    one('email', `Reply to "Maria Garcia" <maria.garcia@example.com>`),
    one('phone', `Tel.: +49 (0)30 ${digits(3)} ${digits(4)}`),
    one(
      'payment-card',
      `card=${(() => {
        const p = '4' + digits(14);
        return p + luhnDigit(p);
      })()}&exp=12/29`,
    ),
    one('iban', `IBAN: ${grouped(ibanOf('GB', `NWBK${digits(14)}`))}.`),
    // Known misses: no separators, prose, obfuscation, lower case.
    one('phone', `call me on 0${digits(10)}`),
    one('generic-secret', `the password is Tr0ub4dor&3${chars(LOWER, 4)}`),
    one('email', 'write to alice at example dot com'),
    one('payment-card', `4111.1111.1111.1111`),
    one('iban', `de89 3704 0044 0532 0130 00`),
  ];
}

/** Positives per detector. */
const PER_DETECTOR = 14;

export function corpus(): Sample[] {
  const samples: Sample[] = [];
  for (const [detector, make] of Object.entries(POSITIVES)) {
    for (let i = 0; i < PER_DETECTOR; i++) samples.push({ text: inContext(make(i), i), expect: [detector] });
  }
  // A few texts with two findings.
  samples.push({
    text: `Contact ${POSITIVES.email?.(99)} or ${POSITIVES.phone?.(1)}; key ${POSITIVES['aws-access-key']?.(1)}`,
    expect: ['email', 'phone', 'aws-access-key'],
  });
  samples.push({
    text: `{"card": "${POSITIVES['payment-card']?.(2)}", "iban": "${POSITIVES.iban?.(1)}"}`,
    expect: ['payment-card', 'iban'],
  });
  samples.push(...hardPositives(), ...negatives());
  return samples;
}
