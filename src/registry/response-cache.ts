/**
 * The disk cache of registry API answers, one file per URL under Moat's cache directory
 * (`registry/<sha256 of the URL>.json`): the body and its validators (ETag, Last-Modified).
 * An answer younger than the TTL is used without asking; an older one is revalidated with
 * If-None-Match / If-Modified-Since; when the registry cannot be reached, the last copy serves.
 * Answers are staged and written only when the whole operation succeeded (every page checked),
 * so a failed listing leaves nothing behind.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { writeFileAtomic } from '../util/atomic-file.js';
import { moatDirs } from '../util/paths.js';

export const REGISTRY_CACHE_TTL_MS = 5 * 60_000;

const cachedSchema = z.object({
  url: z.string(),
  storedAt: z.number(),
  etag: z.string().optional(),
  lastModified: z.string().optional(),
  body: z.string(),
});
export type CachedAnswer = z.infer<typeof cachedSchema>;

export class ResponseCache {
  private readonly staged = new Map<string, CachedAnswer>();

  constructor(
    private readonly dir: string,
    readonly ttlMs = REGISTRY_CACHE_TTL_MS,
  ) {}

  static forEnv(env: NodeJS.ProcessEnv = process.env): ResponseCache {
    return new ResponseCache(join(moatDirs(env).cache, 'registry'));
  }

  private path(url: string): string {
    return join(this.dir, `${createHash('sha256').update(url).digest('hex')}.json`);
  }

  /** The stored answer for `url` (a damaged or foreign file counts as none). */
  async read(url: string): Promise<CachedAnswer | undefined> {
    try {
      const parsed = cachedSchema.safeParse(JSON.parse(await readFile(this.path(url), 'utf8')));
      return parsed.success && parsed.data.url === url ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  fresh(answer: CachedAnswer, now = Date.now()): boolean {
    return now - answer.storedAt < this.ttlMs;
  }

  /** Keeps an answer to write when the operation succeeds. */
  stage(answer: CachedAnswer): void {
    this.staged.set(answer.url, answer);
  }

  async commit(): Promise<void> {
    const answers = [...this.staged.values()];
    this.staged.clear();
    await Promise.all(answers.map((a) => writeFileAtomic(this.path(a.url), JSON.stringify(a))));
  }

  discard(): void {
    this.staged.clear();
  }
}
