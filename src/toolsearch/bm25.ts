/**
 * Okapi BM25 over tool definitions, with per-field weights (BM25F in its simple form: a term's
 * frequency in a document is the weighted sum of its frequencies in the fields). No network, no
 * model: the same tools and query always give the same ranking, ties broken by tool name.
 *
 * Fields and weights: the name (split on `_ - .` and camelCase) counts most, then the title, the
 * argument names, the description, and the arguments' descriptions. Words are lower-cased, folded
 * to a crude stem (plural, -ing/-ed endings, a final e) and stop words dropped, on both sides
 * alike. The query alone is widened (queryTerms): a small thesaurus of everyday words, and what
 * its URLs and file names imply, at a lower weight than its own words.
 */

/** What the index reads of a tool (a `tools/list` entry). */
export interface ToolDocument {
  name: string;
  title?: string;
  description?: string;
  /** `inputSchema.properties`: argument name → its schema (only `description` is read). */
  arguments?: Record<string, { description?: string }>;
}

export interface RankedTool {
  name: string;
  score: number;
}

const WEIGHTS = { name: 3, title: 2, argumentName: 1.5, description: 1, argumentDescription: 0.5 };
const K1 = 1.2;
const B = 0.75;

const STOP_WORDS = new Set(
  (
    'a an and are as at be by can do does for from get has have how i in into is it its me my of on ' +
    'or our please some that the their them then there these this to us use using want we what when ' +
    'which who will with would you your'
  ).split(' '),
);

/** Splits an identifier or a text into words: `get_fileInfo-v2.x` → get, file, info, v2, x. */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/**
 * A crude stem: enough to match "files" with "file", "staging" with "stage" and "changed" with
 * "changes" (a final e goes too, so "stage", "staged" and "staging" all become "stag").
 */
export function stem(word: string): string {
  return dropE(suffixless(word));
}

function suffixless(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return undouble(word.slice(0, -3));
  if (word.endsWith('ed') && word.length > 4) return undouble(word.slice(0, -2));
  if (word.endsWith('es') && /(?:ch|sh|x|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return word.slice(0, -1);
  return word;
}

function dropE(word: string): string {
  return word.length > 4 && word.endsWith('e') ? word.slice(0, -1) : word;
}

function undouble(word: string): string {
  return /([^aeiouls])\1$/.test(word) ? word.slice(0, -1) : word;
}

/** The terms of a text as the index and the query see them (one-letter words dropped). */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text)) if (word.length > 1 && !STOP_WORDS.has(word)) out.push(stem(word));
  return out;
}

/**
 * Everyday words for what tools do, each with the words tool descriptions tend to use for it: a
 * small hand-written thesaurus, applied to the query only, its terms counted at EXPANSION_WEIGHT.
 * Groups are generic (files, the web, images, memory, version control, arithmetic), never a
 * particular server's tool names.
 */
const EXPANSIONS: ReadonlyArray<readonly string[]> = [
  ['folder', 'directory', 'dir'],
  ['picture', 'image', 'photo', 'screenshot', 'media'],
  ['web', 'website', 'webpage', 'page', 'site', 'url', 'internet', 'link'],
  ['download', 'fetch', 'url'],
  ['remember', 'memory', 'knowledge', 'store', 'save'],
  ['forget', 'delete', 'remove', 'erase', 'drop'],
  ['note', 'observation', 'fact'],
  ['person', 'people', 'entity', 'entities', 'thing'],
  ['relationship', 'relation', 'link', 'connection'],
  ['look', 'search', 'find', 'query'],
  ['big', 'size', 'space', 'large', 'largest', 'biggest'],
  ['structure', 'tree', 'recursive', 'hierarchy', 'nested'],
  ['history', 'log', 'commits'],
  ['modified', 'changed', 'metadata', 'info'],
  ['rename', 'move'],
  ['stage', 'add', 'staging'],
  ['unstage', 'reset'],
  ['switch', 'checkout'],
  ['plus', 'sum', 'add', 'total'],
  ['compress', 'gzip', 'zip'],
  ['settings', 'environment', 'env', 'variables'],
  ['think', 'reason', 'reasoning', 'thought', 'thinking', 'problem'],
  ['time', 'clock', 'date'],
  ['edit', 'change', 'replace', 'modify'],
  ['show', 'read', 'display', 'print', 'view', 'open'],
  ['contents', 'inside'],
];
const EXPANSION_WEIGHT = 0.4;

/** Stemmed term → the stemmed terms of its groups (itself left out). */
const EXPANDS: ReadonlyMap<string, readonly string[]> = (() => {
  const map = new Map<string, Set<string>>();
  for (const group of EXPANSIONS) {
    const stems = group.flatMap(terms);
    for (const term of stems) {
      const set = map.get(term) ?? new Set<string>();
      for (const other of stems) if (other !== term) set.add(other);
      map.set(term, set);
    }
  }
  return new Map([...map].map(([term, set]) => [term, [...set]]));
})();

/** Extensions a query's file name may carry, and what such a name is. */
const IMAGE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'bmp']);
const FILE_NAME = /[\w-]+\.([a-z0-9]{1,5})\b/gi;
const URL_IN_TEXT = /\bhttps?:\/\/\S+/i;

/**
 * The query's terms with their weights: its own words (1), what they expand to, and what its
 * URLs and file names imply (a URL: `url`; `notes.txt`: `file`; `logo.png`: `image`, `file`).
 */
export function queryTerms(query: string, expand = true): Map<string, number> {
  const weights = new Map<string, number>();
  const add = (term: string, weight: number) => weights.set(term, Math.max(weights.get(term) ?? 0, weight));
  const withoutUrls = query.replace(/\bhttps?:\/\/\S+/gi, ' ');
  const own = terms(withoutUrls);
  for (const term of own) add(term, 1);
  if (!expand) return weights;
  if (URL_IN_TEXT.test(query)) add('url', 1);
  for (const match of withoutUrls.matchAll(FILE_NAME)) {
    const extension = (match[1] ?? '').toLowerCase();
    if (/^\d+$/.test(extension)) continue;
    add('file', 1);
    if (IMAGE_EXTENSIONS.has(extension)) add(stem('image'), EXPANSION_WEIGHT);
  }
  for (const term of own) for (const other of EXPANDS.get(term) ?? []) add(other, EXPANSION_WEIGHT);
  return weights;
}

interface Indexed {
  name: string;
  /** Term → weighted frequency. */
  tf: Map<string, number>;
  length: number;
}

function addTerms(tf: Map<string, number>, text: string | undefined, weight: number): number {
  if (!text) return 0;
  let added = 0;
  for (const term of terms(text)) {
    tf.set(term, (tf.get(term) ?? 0) + weight);
    added += weight;
  }
  return added;
}

function indexTool(tool: ToolDocument): Indexed {
  const tf = new Map<string, number>();
  let length = addTerms(tf, tool.name, WEIGHTS.name);
  length += addTerms(tf, tool.title, WEIGHTS.title);
  length += addTerms(tf, tool.description, WEIGHTS.description);
  for (const [arg, schema] of Object.entries(tool.arguments ?? {})) {
    length += addTerms(tf, arg, WEIGHTS.argumentName);
    length += addTerms(tf, schema.description, WEIGHTS.argumentDescription);
  }
  return { name: tool.name, tf, length };
}

/** A BM25 index over one tool listing. */
export class ToolIndex {
  readonly #docs: Indexed[];
  readonly #df = new Map<string, number>();
  readonly #avgLength: number;

  constructor(tools: readonly ToolDocument[]) {
    this.#docs = tools.map(indexTool);
    let total = 0;
    for (const doc of this.#docs) {
      total += doc.length;
      for (const term of doc.tf.keys()) this.#df.set(term, (this.#df.get(term) ?? 0) + 1);
    }
    this.#avgLength = this.#docs.length > 0 ? total / this.#docs.length || 1 : 1;
  }

  /**
   * The best `limit` tools for a query, best first; tools sharing no term with it are left out.
   * `expand: false` ranks by the query's own words only (the bench compares both).
   */
  search(query: string, limit: number, options: { expand?: boolean } = {}): RankedTool[] {
    const weighted = queryTerms(query, options.expand ?? true);
    const n = this.#docs.length;
    const ranked: RankedTool[] = [];
    for (const doc of this.#docs) {
      let score = 0;
      for (const [term, weight] of weighted) {
        const f = doc.tf.get(term);
        if (f === undefined) continue;
        const df = this.#df.get(term) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (weight * idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * doc.length) / this.#avgLength));
      }
      if (score > 0) ranked.push({ name: doc.name, score });
    }
    ranked.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return ranked.slice(0, Math.max(0, limit));
  }
}
