/**
 * Okapi BM25 over tool definitions, with per-field weights (BM25F in its simple form: a term's
 * frequency in a document is the weighted sum of its frequencies in the fields). No network, no
 * model: the same tools and query always give the same ranking, ties broken by tool name.
 *
 * Fields and weights: the name (split on `_ - .` and camelCase) counts most, then the title, the
 * argument names, the description, and the arguments' descriptions. Words are lower-cased, folded
 * to a crude stem (plural and -ing/-ed endings) and stop words dropped, on both sides alike.
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

/** A crude stem: enough to match "files" with "file" and "reading" with "read". */
export function stem(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return undouble(word.slice(0, -3));
  if (word.endsWith('ed') && word.length > 4) return undouble(word.slice(0, -2));
  if (word.endsWith('es') && /(?:ch|sh|x|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return word.slice(0, -1);
  return word;
}

function undouble(word: string): string {
  return /([^aeiouls])\1$/.test(word) ? word.slice(0, -1) : word;
}

/** The terms of a text as the index and the query see them. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text)) if (!STOP_WORDS.has(word)) out.push(stem(word));
  return out;
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

  /** The best `limit` tools for a query, best first; tools sharing no term with it are left out. */
  search(query: string, limit: number): RankedTool[] {
    const queryTerms = [...new Set(terms(query))];
    const n = this.#docs.length;
    const ranked: RankedTool[] = [];
    for (const doc of this.#docs) {
      let score = 0;
      for (const term of queryTerms) {
        const f = doc.tf.get(term);
        if (f === undefined) continue;
        const df = this.#df.get(term) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * doc.length) / this.#avgLength));
      }
      if (score > 0) ranked.push({ name: doc.name, score });
    }
    ranked.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return ranked.slice(0, Math.max(0, limit));
  }
}
