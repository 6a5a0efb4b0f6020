/**
 * How `moat` launches the long-lived supervisor process (which runs the proxy): the runtime
 * settings that keep its resident memory near what it needs (docs/performance.md, "Memory").
 */

/**
 * V8 flags for the supervisor. The proxy's live heap is about 12 MB, but under load V8 grows the
 * young generation to its default maximum (3 × 16 MB semi-spaces) and keeps it: a 2 MB
 * semi-space holds RSS after load about 60 MB lower; the scavenges it makes more frequent copy
 * only the few objects that outlive a request.
 */
export const SUPERVISOR_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];

/**
 * Environment defaults for the supervisor; the user's own environment wins. glibc gives each
 * thread that allocates its own malloc arena (up to 8 per core), and memory freed in one is not
 * returned to the system: two arenas hold RSS after load about 5 MB lower.
 */
export const SUPERVISOR_ENV_DEFAULTS: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
